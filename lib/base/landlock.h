/*
 * landlock.h - restricting what a process may do with files, with Landlock where the kernel
 * has it (internal; landlock.c is the one place that speaks Landlock's system calls).
 *
 * Both kinds of confined child use it: a compiler (build/confine.c: reads the library folder
 * and the toolchain, writes its temporary folder) and a worker (isolate/worker.c: reads its
 * library, the library folder and the system's libraries).  Without Landlock (a kernel before
 * 5.13, or NEURONOP_LANDLOCK=off for tests of what remains) nothing is restricted, and
 * callers keep checks of their own.
 */
#ifndef NEURONOP_LANDLOCK_H
#define NEURONOP_LANDLOCK_H

#include <stdbool.h>

/* What a rule lets the process do beneath its path (a folder) or with it (a file). */
enum nopi_landlock_right {
    NOPI_LL_READ = 1,     /* read files, list folders */
    NOPI_LL_EXEC = 2,     /* run programs */
    NOPI_LL_WRITE = 4,    /* everything else but running: write, create, remove, truncate */
};

typedef struct nopi_landlock_rule {
    const char *path;     /* a path that does not exist allows nothing and is no error */
    unsigned rights;      /* enum nopi_landlock_right bits */
} nopi_landlock_rule;

/* Whether this kernel has Landlock (and NEURONOP_LANDLOCK is not "off"). */
bool nopi_landlock_available(void);

/* Restricts the calling process, and every process it forks, to the n rules: any other file
 * access is refused with EACCES, and TCP bind and connect too where the kernel can (ABI 4,
 * Linux 6.7); scoped: and, where the kernel can (ABI 6, Linux 6.12), signals to a process
 * that is not the caller or one of those it starts (EPERM), and connecting to one's abstract
 * unix socket.  The process must have set no_new_privs.  0; -1 when the kernel has Landlock
 * and refused to restrict (the caller must not go on as if confined); 0 without Landlock. */
int nopi_landlock_restrict(const nopi_landlock_rule *rules, int n, bool scoped);

#endif /* NEURONOP_LANDLOCK_H */
