/*
 * library.h - a loaded op library (internal view of nop_library).
 */
#ifndef NEURONOP_LIBRARY_H
#define NEURONOP_LIBRARY_H

#include "api.h"
#include "internal.h"
#include "lines.h"

struct nop_library {
    void *handle;                 /* dlopen handle */
    const nt__lib_desc *desc;     /* the library's descriptor, inside the mapped object */
    char *path;
    uintptr_t text_lo, text_hi;   /* its code, where a kernel may be stopped on timeout */
    uintptr_t base;               /* its load address */
    nopi_lines *lines;            /* memcheck builds: source lines of its kernels, or NULL */
};

#endif /* NEURONOP_LIBRARY_H */
