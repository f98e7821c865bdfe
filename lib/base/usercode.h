/*
 * usercode.h - what a process does before it runs user code (internal): confines what it may
 * read, empties its environment, keeps only its own descriptors, dies with its parent and
 * gives up its powers.  The worker (isolate/worker.c) does all of it before a kernel, shape
 * function or reference runs, and so does the build's registration child (build/register.c)
 * before a C++ library's registration code does.
 */
#ifndef NEURONOP_USERCODE_H
#define NEURONOP_USERCODE_H

#include <stdbool.h>
#include <sys/types.h>

/* Confines this process, about to run user code: first what it may read, then its
 * environment, as below (in that order: the rules read some variables).  0; -1 (errno) when
 * the kernel refused the Landlock ruleset, with the environment left as it was. */
int nopi_usercode_confine(const char *library, const char *folder);

/* What nopi_usercode_confine does.  Its reads: restricts, where the kernel has Landlock
 * (landlock.h), what this process and what it forks may read to: library (a file, or NULL) and its library folder (folder when not NULL: a test's manifest folder, where a
 * library built elsewhere, --build-dir, cannot say it is), the system's library folders
 * (/usr, /lib, /lib64, /etc/ld.so.cache) and those of LD_LIBRARY_PATH, and its own /proc
 * entry.  The library folder is the nearest of the library's folder and its parents, up to
 * four, that holds a neuronop.yaml; else the parent of its folder when that is called build
 * (the default build_directory); else its own folder; and never one that would open more
 * than a library's files (the root, a top-level folder, the user's home or a folder above
 * it, a shared temporary folder itself): then the library's own folder, if it is none of
 * those, else nothing beside the file.  Sets no_new_privs: call it before a seccomp filter
 * that forbids Landlock's calls.
 * Its environment: empties it, which CI fills with its secrets and user code could otherwise
 * print (no device kernel has one): the block the process started with, which
 * /proc/self/environ shows (strings a later setenv replaced included), is zeroed, then every
 * variable dropped. */

/* Moves the n (at most 2) descriptors fds[] this process keeps to 3, 4 (updating fds[]) and
 * closes every other from 3 + n up, so that user code holds none of its parent's (the build's
 * lock, another device's channels, a sibling's pidfd): a filter that lets it write to or map
 * a descriptor it holds cannot tell them apart.  0, or -1. */
int nopi_usercode_keep_fds(int *fds, int n);

/* Makes this process die with parent (SIGKILL when parent ends, however it ends: a process
 * of user code that outlived neuronop would run on unbounded).  false when parent has already
 * ended. */
bool nopi_usercode_die_with(pid_t parent);

/* Makes this process one that no other can read or trace, and that can read or trace no
 * other: not dumpable (its /proc/PID/mem, maps and environ closed to any process without
 * CAP_SYS_PTRACE) and with no capabilities at all (root's CAP_SYS_PTRACE would open every
 * process's memory to it: neuronop's, holding the references' answers, and a sibling
 * worker's).  Before any user code, and before a filter that forbids prctl and capset. */
void nopi_usercode_drop_powers(void);

#endif /* NEURONOP_USERCODE_H */
