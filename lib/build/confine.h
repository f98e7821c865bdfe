/*
 * confine.h - what a compiler process may do (internal to lib/build/).
 *
 * Every compile of a build runs in a child process (libtcc in a fork of neuronop, g++ and cc
 * as programs): the child sets its own CPU-time and address-space limits and, where the
 * kernel has Landlock, restricts itself to reading the library folder and the toolchain's
 * folders and to writing the build's temporary folder, and refuses itself the system calls
 * no compile makes (the network, other processes, namespaces: ccfilter.h).  The parent turns the child's end into
 * a verdict ("went past N s", "went past N MB") and, with or without Landlock, checks every
 * file a diagnostic names before quoting it: no line of a file outside those folders reaches
 * the user's log.
 */
#ifndef NEURONOP_CONFINE_H
#define NEURONOP_CONFINE_H

#include <sys/types.h>

#include "base/internal.h"
#include "ccfilter.h"

/* Defaults of the limits (neuronop-build(1)): far above what a real kernel needs (every
 * example builds within 150 MB of address space, the C++ ones in about 2 s). */
#define NOPI_COMPILE_SECONDS 60
#define NOPI_COMPILE_MB 2048

#define NOPI_CONFINE_MAX 24

typedef struct nopi_confine {
    const char *read[NOPI_CONFINE_MAX];   /* folders or files the compiler may read */
    int nread;
    const char *write;                    /* the one folder it may write, or NULL */
    unsigned cpu_seconds;                 /* 0: no limit */
    unsigned mem_mb;                      /* 0: no limit */
    /* folders the parent accepts in diagnostics, resolved (realpath): read[] and /usr */
    char *resolved[NOPI_CONFINE_MAX + 1];
    int nresolved;
    struct nopi_ccserver *server;         /* compile.c: the libtcc child serving compiles */
    nopi_ccfilter filter;                 /* the seccomp filter, built by nopi_confine_resolve */
} nopi_confine;

/* Adds a folder or file the compiler may read (borrowed; ignored when the table is full). */
void nopi_confine_read(nopi_confine *c, const char *path);
/* Resolves the folders for nopi_confine_allows and builds the seccomp filter (in the parent:
 * the child must not allocate); call once all are added.  0, or -1 when out of memory. */
int nopi_confine_resolve(nopi_confine *c);
void nopi_confine_free(nopi_confine *c);

/*
 * In the child, before it compiles or execs: its own process group (the parent ends the
 * group at the deadline), death with the parent, the limits, no new privileges, the Landlock
 * ruleset (exec: the compiler is a program, so the system's program folders are readable and
 * executable too), the seccomp filter last.  Uses only system calls, safe between fork and
 * exec.  0, or -1 when a limit cannot be set or Landlock or seccomp refused; a kernel
 * without Landlock is not an error (the parent's checks remain).  address_base: bytes already mapped that the memory limit comes on top of (a
 * forked child keeps its parent's mappings; 0 before an exec).
 */
int nopi_confine_child(const nopi_confine *c, bool exec, unsigned long long address_base);

/* True when the compiler children will be confined by Landlock (the kernel has it, and
 * NEURONOP_LANDLOCK is not "off"); without it, builds check the files each compile read
 * (nopi_confine_deps, and libtcc's preprocessing pass in compile.c). */
bool nopi_confine_landlock(void);

/* Fills d's message and detail: the build may not read `name` (d's location stays). */
void nopi_confine_refuse(nop_diag *d, const char *name);
/* The same for NOPI_DEPS_UNREADABLE: `name` as listed names no file the build can check. */
void nopi_confine_refuse_unreadable(nop_diag *d, const char *name);
/* The same for NOPI_DEPS_AMBIGUOUS: `name`, a file in neuronop's folder, is also the bare
 * name the assembler gives the source; the detail says what to do. */
void nopi_confine_refuse_ambiguous(nop_diag *d, const char *name);

/* A make-style dependency list a compile wrote, and how to read it (nopi_confine_deps). */
typedef struct nopi_deps {
    const char *path;     /* the list */
    bool gas;             /* gas's --MD list (else g++'s -MD): their escapes differ */
    bool complete;        /* the compile succeeded, so it read every file it lists: a name
                           * that resolves to nothing, or cannot be read back, is refused */
    const char *file;     /* gas's list: the bare name of the unit's .file directive (the
                           * compiled file's), which gas lists though it reads nothing of it */
} nopi_deps;

/* What nopi_confine_deps found. */
typedef enum nopi_deps_verdict {
    NOPI_DEPS_OK,
    NOPI_DEPS_OUTSIDE,    /* a file it lists is outside the folders c allows */
    NOPI_DEPS_AMBIGUOUS,  /* the .file name is a file outside, in neuronop's folder: a read
                           * of it (.incbin "name") would be listed the same way */
    NOPI_DEPS_UNLISTED,   /* a compile that succeeded wrote no list (a wrapper's doing) */
    NOPI_DEPS_UNREADABLE, /* after a compile that succeeded, a name that names no file, or
                           * one its list may spell for another (next_name in confine.c) */
} nopi_deps_verdict;

/* Reads a dependency list: the verdict, and the name it is about (as listed, relative to
 * neuronop's folder; the list's own for NOPI_DEPS_UNLISTED) copied to bad.  An unreadable
 * list is OK when the compile failed. */
nopi_deps_verdict nopi_confine_deps(const nopi_confine *c, const nopi_deps *d, char *bad,
                                    size_t size);

/* The current address-space size of this process in bytes (0 when unknown). */
unsigned long long nopi_confine_address_space(void);

/* True when path, resolved, is inside one of the resolved folders. */
bool nopi_confine_allows(const nopi_confine *c, const char *path);

/*
 * Checks a diagnostic a compiler gave before it is shown: a message located in a file the
 * build may not read, or about one it was refused ("include file '/etc/shadow' not found",
 * "/etc/shadow: Permission denied"), becomes "'F' is outside the library folder", located at
 * the user's line that included it when the message says which; nothing of the file is
 * quoted.  A relative name in the message is taken from the folder of the file the message
 * is located in.  Returns true when it changed d.
 */
bool nopi_confine_diag(const nopi_confine *c, nop_diag *d);

/* Fills err with "compiling 'NAME' went past N s" (time) or "... N MB", and what to do. */
void nopi_confine_past(const nopi_confine *c, nop_error *err, const char *name, bool time);

/*
 * Waits for a compiler child until it ends or the wall-clock deadline (seconds from now,
 * <= 0: none) passes, then kills it.  Either way it then kills and reaps what is left of the
 * child's process group (nopi_reap_group_usage: the child must lead its own group, as
 * nopi_confine_child makes it), so that no process of a compile outlives it.  Fills *status
 * as waitpid does and *cpu with the child's CPU seconds; returns 1 when it was killed at the
 * deadline, 0 when it ended, -1 when it could not be waited for.  fd: a pipe to read
 * meanwhile into sink (or -1).
 */
typedef void nopi_confine_sink(void *ctx, const char *data, size_t len);
int nopi_confine_wait(pid_t pid, double deadline, int fd, nopi_confine_sink *sink, void *ctx,
                      int *status, double *cpu);

#endif /* NEURONOP_CONFINE_H */
