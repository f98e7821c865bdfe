/*
 * api.h - the runtime's function table, struct nt__api, one member per entry of api.def and
 * then memcheck's hooks (internal).  A built library's trampolines jump through member
 * offsets of this struct, so its layout is part of the library format (NT_ABI_VERSION).
 */
#ifndef NEURONOP_API_H
#define NEURONOP_API_H

#define NT_RUNTIME
#include <assert.h>   /* __assert_fail and abort are part of the table: kernels may assert */
#include <stdlib.h>
#include <neuronop.h>
#include <neuronop/abi.h>

struct nt__api {
#define NT_API(ret, name, params) ret (*name) params;
#include "api.def"
#undef NT_API
    /*
     * memcheck's hooks (memcheck.c): what libtcc's bounds-checking code (-b) calls in a
     * library built with --memcheck.  The trampolines gen.c writes for the __bound_*
     * functions add what tcc does not pass: `pc`, the address the instrumented call returns
     * to (which source line made the access), `fp`, the calling frame (whose locals a
     * table lists), and `size`, the width of an access.  Never called outside a run's
     * kernel code (but tolerate it: host code may share a memcheck source).
     */
    void *(*mc_ptr_add)(char *p, size_t off, const void *pc);
    void *(*mc_ptr_indir)(char *p, size_t off, size_t size, const void *pc);
    void (*mc_local_new)(const size_t *table, char *fp, const void *pc);
    void (*mc_local_delete)(const size_t *table, char *fp);
    void (*mc_new_region)(void *p, size_t size, char *fp);
    void *(*mc_memcpy)(void *d, const void *s, size_t n, const void *pc);
    void *(*mc_memmove)(void *d, const void *s, size_t n, const void *pc);
    void *(*mc_memset)(void *d, int c, size_t n, const void *pc);
    int (*mc_memcmp)(const void *a, const void *b, size_t n, const void *pc);
    size_t (*mc_strlen)(const char *s, const void *pc);
    char *(*mc_strcpy)(char *d, const char *s, const void *pc);
    char *(*mc_strncpy)(char *d, const char *s, size_t n, const void *pc);
    int (*mc_strcmp)(const char *a, const char *b, const void *pc);
    int (*mc_strncmp)(const char *a, const char *b, size_t n, const void *pc);
    char *(*mc_strcat)(char *d, const char *s, const void *pc);
    char *(*mc_strchr)(const char *s, int c, const void *pc);
};

#endif /* NEURONOP_API_H */
