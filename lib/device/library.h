/*
 * library.h - a loaded op library (internal view of nop_library).
 */
#ifndef NEURONOP_LIBRARY_H
#define NEURONOP_LIBRARY_H

#include <sys/stat.h>

#include "base/api.h"
#include "base/internal.h"
#include "lines.h"

/* A global or static array of a memcheck library, as libtcc's -b records it, with its name
 * from the library's symbol table (NULL when it has none; owned by the library). */
typedef struct nopi_global {
    uintptr_t start, size;
    char *name;
} nopi_global;

/* api.c: the runtime's function table, which loading a library installs in it. */
extern const struct nt__api nopi_api_table;

/* lib itself when its code is loaded; otherwise (a library nop_library_describe read) loads
 * it into *opened, which the caller closes, and returns that: where user code runs (in a
 * worker process), the library is loaded there and nowhere else.  NULL with err filled when
 * it cannot be loaded, or when the file is no longer the one described (rebuilt since). */
const nop_library *nopi_library_runnable(const nop_library *lib, nop_library **opened,
                                         nop_error *err);

/* The index in lib of the op a caller knows as op named name, from a description of lib's
 * file read before lib was loaded: op itself while it still has that name, else the op of
 * that name in the file as rebuilt since (its ops in another order), so a run never runs
 * another op than the one named; -1 with err filled when the rebuild has no such op. */
int nopi_library_same_op(const nop_library *lib, int op, const char *name, nop_error *err);

/* describe.c: frees the descriptor of a library nop_library_describe made. */
void nopi_library_free_described(nop_library *lib);

struct nop_library {
    void *handle;                 /* dlopen handle */
    const nt__lib_desc *desc;     /* the library's descriptor, inside the mapped object */
    char *path;
    struct stat st;               /* its file, as stat saw it just before it was loaded or
                                   * read (all zeros when stat failed): nop_library_changed */
    uintptr_t text_lo, text_hi;   /* its code, where a kernel may be stopped on timeout */
    uintptr_t data_lo, data_hi;   /* its writable segment: global and static data (0, 0: none) */
    uintptr_t base;               /* its load address */
    uintptr_t map_lo, map_hi;     /* what it maps: [map_lo, map_hi) */
    nopi_lines *lines;            /* memcheck builds: source lines of its kernels, or NULL */
    nopi_global *globals;         /* memcheck builds: its global and static arrays, by start */
    size_t nglobals;
    char *argnames;               /* neuronop_argnames, a copy (argnames.c's lines), or NULL:
                                   * built before libraries recorded them */
};

/* Op `name` of lib as messages name it, in its namespace when it has one ("my_ops::relu"),
 * into buf (whose size may cut it). */
void nopi_op_qualname(const nop_library *lib, const char *name, char *buf, size_t size);

/* The symbol a library's parameter names are exported as (lib/build/argnames.c). */
#define NOPI_ARGNAMES_SYMBOL "neuronop_argnames"

#endif /* NEURONOP_LIBRARY_H */
