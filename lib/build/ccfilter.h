/*
 * ccfilter.h - the seccomp filter of compiler children (internal to lib/build/; ccfilter.c
 * owns the table of refused calls and the BPF program made from it).
 *
 * A compiler is a trusted program, but what it compiles is not (a hostile pull request's
 * sources and manifest, built in CI): should a source exploit a bug of cc1plus, as, ld or
 * libtcc, the process it took must not reach the network, another process, the kernel's
 * rarer interfaces or the user's terminal.  Landlock (confine.c) bounds the files and,
 * where the kernel has its scopes, the signals (which a filter cannot judge: it does not
 * know the compiler's own children from the user's other processes); this filter refuses,
 * with EPERM, the system calls no compile makes, and every call through another entry
 * point (32-bit int 0x80, x32).  It is a deny-list, not the worker's
 * allow-list (isolate/seccomp.c): the gcc driver forks and execs, pipes, maps and writes
 * files, and which calls a toolchain (or a wrapper the user names as CXX) makes varies from
 * one version to the next.  EPERM rather than a kill: tools probe for what they may do and
 * go on without it.
 *
 * The parent builds the program once per build (no allocation: it lives in the caller's
 * struct); the child, between fork and exec, only hands it to the kernel (one prctl, which
 * is async-signal-safe).  NEURONOP_SECCOMP=off in the environment leaves it empty: for a
 * compiler wrapper that needs the network (distcc, sccache), with NEURONOP_LANDLOCK=off.
 */
#ifndef NEURONOP_CCFILTER_H
#define NEURONOP_CCFILTER_H

#include <linux/filter.h>

#define NOPI_CCFILTER_MAX 400   /* instructions: 5 at most for each of ccfilter.c's rules */

typedef struct nopi_ccfilter {
    struct sock_filter prog[NOPI_CCFILTER_MAX];
    unsigned short len;   /* 0: no filter (NEURONOP_SECCOMP=off, or not built) */
} nopi_ccfilter;

/* In the parent: writes the filter into f, or leaves it empty under NEURONOP_SECCOMP=off. */
void nopi_ccfilter_build(nopi_ccfilter *f);

/* In the child, once no_new_privs is set: installs f (nothing when it is empty).  Only a
 * prctl, safe between fork and exec.  0, or -1 with errno when the kernel refused it. */
int nopi_ccfilter_install(const nopi_ccfilter *f);

#endif /* NEURONOP_CCFILTER_H */
