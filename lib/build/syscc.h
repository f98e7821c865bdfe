/*
 * syscc.h - the system compilers (g++, cc) and linker as child processes (internal).
 *
 * libtcc compiles C in its own child process (compile.h).  C++ sources, `compiler: cc`
 * kernels and the link of a library that has either go to the system's gcc-compatible driver
 * instead.  This file owns running them (several at once, output to a file, no shell, each
 * confined: confine.h) and turning what they print into nop_diag records that keep
 * neuronop's contract: the first error at the user's file, line and column, instantiation
 * and inclusion noise folded into one detail line.
 */
#ifndef NEURONOP_SYSCC_H
#define NEURONOP_SYSCC_H

#include "base/internal.h"
#include "confine.h"

/* A growing argv: strings are copied; NULL-terminated. */
typedef struct nopi_argv {
    char **v;
    int n, cap;
    bool failed;          /* an allocation failed: the list is incomplete */
} nopi_argv;

void nopi_argv_add(nopi_argv *a, const char *s);
void nopi_argv_addf(nopi_argv *a, const char *fmt, ...) NOPI_PRINTF(2, 3);
void nopi_argv_free(nopi_argv *a);

typedef enum nopi_limit { NOPI_LIMIT_NONE, NOPI_LIMIT_TIME, NOPI_LIMIT_MEMORY } nopi_limit;

/* One command: argv, where its stdout and stderr go, and its exit status once run. */
typedef struct nopi_tool_job {
    nopi_argv argv;
    char *log;            /* file that receives stdout and stderr (caller owns the string) */
    const char *name;     /* what it compiles, as the user wrote it, for a limit's message */
    const char *source;   /* and its path, where a refused read is reported; may be NULL */
    char *deps;           /* its -MF file, checked when Landlock is absent; NULL (caller owns) */
    char *asdeps;         /* and its assembler's (gas --MD: what .incbin and .include read,
                           * which -MF does not list); NULL (caller owns) */
    int status;           /* exit status; 128 + N when killed by signal N; -1 not run */
    nopi_limit limit;     /* a failed job that went past a limit of its confine */
    bool done;            /* has its result already, not run: the compile cache had its
                           * output (status 0), or its preprocessing went past a limit */
} nopi_tool_job;

/* Runs the jobs but the done ones, at most `parallel` at a time, and waits for all, each
 * confined by c (NULL:
 * not at all; confine.h), which also sets TMPDIR to c->write.  -1 with an error only when a
 * job cannot be started (the program is missing: says which package to install); a job that
 * fails just has a non-zero status, and its limit when it went past one. */
int nopi_tools_run(nopi_tool_job *jobs, int n, int parallel, const nopi_confine *c,
                   nop_error *err);

/*
 * A tool's log (its stdout and stderr) is a file the tool writes itself, so however much it
 * writes it never waits for neuronop to read, and several run at once; the file is bounded
 * by the compile's own limit on what it writes (--compile-memory), and neuronop reads at most
 * NOPI_LOG_KEEP bytes of it: its start, where g++'s first error and what led to it are (and,
 * for the words that say a limit was hit, its end).  A wrapper that prints gigabytes costs
 * neuronop no more memory than that.
 */
#define NOPI_LOG_KEEP (256u << 10)

/* Reads the first NOPI_LOG_KEEP bytes of a tool's log into *text (malloc'd, NUL-terminated;
 * cut at its last whole line when there was more), and how many bytes were left unread into
 * *more.  0, or -1 when it cannot be read. */
int nopi_tool_log(const char *path, char **text, unsigned long long *more);

/*
 * Reads a gcc-style log (-fdiagnostics-plain-output) of a failed or warning compile.
 * Warnings in the user's files go to diag; the first error fills err (NOP_ERR_COMPILE) at the
 * user's location: an error inside a header under `own_dir` (neuronop's include folder) is
 * moved to the user line that led to it ("required from here", "In file included from"),
 * with the header's location and the template it was in as detail.  `fallback` names what
 * failed when the log has no error line.  Only the log's start is read (nopi_tool_log).
 * Returns -1 when an error was recorded.
 */
int nopi_gcc_log(const char *log_path, const char *own_dir, const char *fallback,
                 nop_diag_fn *diag, void *ctx, nop_error *err);

/*
 * cxxdiag.c: rewords, in place, an error g++ gave about the torch API in the device's terms
 * (msg holds at most size bytes): a name the device's torch lacks becomes "'torch::x' is not
 * in the device's torch subset" with a suggestion from what it has.  source is the text of
 * the line the error is at, or NULL.  Fills hint (a detail line, or "") and returns true
 * when it changed or explained the message.
 */
bool nopi_cxx_reword(char *msg, size_t size, const char *source, char *hint,
                     size_t hint_size);

/* True when program names clang, whose flags for plain messages, and whose precompiled
 * headers, are not gcc's. */
bool nopi_is_clang(const char *program);

/* The C++ compiler: $CXX, else "g++"; and the C compiler: $CC, else "cc". */
const char *nopi_cxx_program(const char *manifest_value);
const char *nopi_cc_program(void);

#endif /* NEURONOP_SYSCC_H */
