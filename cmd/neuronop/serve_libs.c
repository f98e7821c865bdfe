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
 * does, so every call asks whether the file has changed since (nop_library_changed).
 */
#include <string.h>

#include "serve.h"

const nop_library *served_runnable(served_lib *libs, int nlibs, int i, bool here,
                                   nop_error *err)
{
    served_lib *sl = &libs[i];
    if (!here)
        return sl->described;   /* the worker loads it */
    if (sl->loaded && !nop_library_changed(sl->loaded))
        return sl->loaded;
    const char *path = nop_library_path(sl->described);
    /* the path unloaded before it is loaded again: the loader hands back the library it
     * already has for a path, whatever the file now holds (a path has one slot, which a
     * load of a rebuilt library takes back; every slot is looked at all the same) */
    for (int k = 0; k < nlibs; k++)
        if (libs[k].loaded && strcmp(nop_library_path(libs[k].described), path) == 0) {
            nop_library_close(libs[k].loaded);
            libs[k].loaded = NULL;
        }
    /* (nop_library_open notes the file before it loads it: one replaced meanwhile is loaded
     * again at the next call, never kept stale) */
    if (nop_library_open(&sl->loaded, path, err) != 0)
        return NULL;
    return sl->loaded;
}

void served_close(served_lib *sl)
{
    nop_library_close(sl->loaded);
    nop_library_close(sl->described);
    memset(sl, 0, sizeof *sl);
}
