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

/*
 * memcheck's hooks (memcheck.c): what libtcc's bounds-checking code (-b) calls in a library
 * built with --memcheck, as an X-macro list X(ret, name, params): the table's members below,
 * the runtime's nopi_<name> functions (api_impl.h) and the table's entries (api.c) all come
 * from it.  gen.c maps each __bound_* function to its hook.  The trampolines add what tcc
 * does not pass: `pc`, the address the instrumented call returns to (which source line made
 * the access), `fp`, the calling frame (whose locals a table lists), and `size`, the width
 * of an access.  Never called outside a run's kernel code (but tolerate it: host code may
 * share a memcheck source).
 */
#define NT__MEMCHECK_HOOKS(X) \
    X(void *, mc_ptr_add, (char *p, size_t off, const void *pc)) \
    X(void *, mc_ptr_indir, (char *p, size_t off, size_t size, const void *pc)) \
    X(void, mc_local_new, (const size_t *table, char *fp, const void *pc)) \
    X(void, mc_local_delete, (const size_t *table, char *fp)) \
    X(void, mc_new_region, (void *p, size_t size, char *fp)) \
    X(void *, mc_memcpy, (void *d, const void *s, size_t n, const void *pc)) \
    X(void *, mc_memmove, (void *d, const void *s, size_t n, const void *pc)) \
    X(void *, mc_memset, (void *d, int v, size_t n, const void *pc)) \
    X(int, mc_memcmp, (const void *a, const void *b, size_t n, const void *pc)) \
    X(size_t, mc_strlen, (const char *s, const void *pc)) \
    X(char *, mc_strcpy, (char *d, const char *s, const void *pc)) \
    X(char *, mc_strncpy, (char *d, const char *s, size_t n, const void *pc)) \
    X(int, mc_strcmp, (const char *a, const char *b, const void *pc)) \
    X(int, mc_strncmp, (const char *a, const char *b, size_t n, const void *pc)) \
    X(char *, mc_strcat, (char *d, const char *s, const void *pc)) \
    X(char *, mc_strchr, (const char *s, int ch, const void *pc))

struct nt__api {
#define NT_API(ret, name, params) ret (*name) params;
#include "api.def"
    NT__MEMCHECK_HOOKS(NT_API)
#undef NT_API
};

#endif /* NEURONOP_API_H */
