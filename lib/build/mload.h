/*
 * mload.h - the manifest loader's state, shared by the files that load a manifest's sections
 * (internal to lib/build): manifest.c (the top level, sources, flags, ops) and
 * manifest_tests.c (the tests section).
 */
#ifndef NEURONOP_MLOAD_H
#define NEURONOP_MLOAD_H

#include "manifest.h"
#include "base/ydoc.h"

/* Loading state: the YAML document and the manifest being filled. */
typedef struct loader {
    nopi_ydoc *doc;
    nop_manifest *m;
    nop_error *err;
} loader;

static inline int oom(loader *L)
{
    return nopi_nomem(L->err);
}

static inline nopi_pos pos_of(const nopi_ynode *n)
{
    nopi_pos p = { n->line, n->col };
    return p;
}

/* Loads the `tests` sequence n into L->m (after the ops, which tests name); 0, or -1 with
 * L->err filled at the offending node. */
int nopi_manifest_load_tests(loader *L, const nopi_ynode *n);

/* manifest.c: fills L->err at `at`: a function name the glue reserves (nopi_is_glue_name);
 * returns -1. */
int nopi_manifest_glue_name(loader *L, const nopi_ynode *at, const char *name);

#endif /* NEURONOP_MLOAD_H */
