/*
 * serve_libs.c - the supervisor's libraries (serve.h): each described from its file for
 * Python, and, when the supervisor runs user code itself (NEURONOP_SANDBOX=off), its code
 * loaded at its first call and kept for the session.
 *
 * Loading a library for every call cost about a quarter of a millisecond here, most of it
 * not the loader's: unloading unmaps the library, and each munmap or mprotect of a process
 * with the device's threads makes the kernel flush the other CPUs' TLBs, which is slow on a
 * virtual machine.  A library kept loaded must not outlive its file, though: a rebuild
 * between two calls (a new file at the same path) must run the new code, as the worker
 * does, so every call compares the file with what stat said just before it was loaded.
 */
#include <string.h>
#include <sys/stat.h>

#include "serve.h"

/* Whether a and b are the same file with the same contents, as far as stat tells. */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

const nop_library *served_runnable(served_lib *libs, int nlibs, int i, bool here,
                                   nop_error *err)
{
    served_lib *sl = &libs[i];
    if (!here)
        return sl->described;   /* the worker loads it */
    const char *path = nop_library_path(sl->described);
    struct stat now = { 0 };   /* all zeros when stat fails: the next call loads again */
    bool fresh = stat(path, &now) == 0;
    if (sl->loaded && fresh && same_file(&now, &sl->st))
        return sl->loaded;
    /* every copy of the path unloaded before it is loaded again: the loader hands back the
     * library it already has for a path, whatever the file now holds (Python loads a
     * rebuilt library again, which gives the same path a second slot) */
    for (int k = 0; k < nlibs; k++)
        if (libs[k].loaded && strcmp(nop_library_path(libs[k].described), path) == 0) {
            nop_library_close(libs[k].loaded);
            libs[k].loaded = NULL;
        }
    /* stat came first: a file replaced between stat and the load is loaded again at the
     * next call, never kept stale.  A file stat cannot see fails to load, with the
     * loader's own words */
    if (nop_library_open(&sl->loaded, path, err) != 0)
        return NULL;
    sl->st = now;
    return sl->loaded;
}

void served_close(served_lib *sl)
{
    nop_library_close(sl->loaded);
    nop_library_close(sl->described);
    memset(sl, 0, sizeof *sl);
}
