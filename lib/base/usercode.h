/*
 * usercode.h - what a process does before it runs user code (internal): confines what it may
 * read and empties its environment.  The worker (isolate/worker.c) does both before a kernel,
 * shape function or reference runs, and so does the build's registration child
 * (build/register.c) before a C++ library's registration code does.
 */
#ifndef NEURONOP_USERCODE_H
#define NEURONOP_USERCODE_H

/* Confines this process, about to run user code: first what it may read, then its
 * environment, as below (in that order: the rules read some variables).  0; -1 (errno) when
 * the kernel refused the Landlock ruleset, with the environment left as it was. */
int nopi_usercode_confine(const char *library);

/* What nopi_usercode_confine does.  Its reads: restricts, where the kernel has Landlock
 * (landlock.h), what this process and what it forks may read to: library (a file, or NULL) and its library folder, the system's library folders
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

#endif /* NEURONOP_USERCODE_H */
