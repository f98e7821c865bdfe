/*
 * api_impl.h - what the files implementing the kernel API share (internal): the checks every
 * call makes, the TCM pool, and the lists that name the API's families.
 *
 * api.c: services, shapes, factories and the table; accessors.c: standard, streaming and TCM
 * accessors; tcm.c: the pool; tensorlib.c (with tlpromote.c and tlkernel.c): element-wise ops,
 * full and fill_.
 */
#ifndef NEURONOP_API_IMPL_H
#define NEURONOP_API_IMPL_H

#include "core.h"

#include "base/api_families.h"   /* the op families and dtypes, as api.def has them */

/* The calling core; aborts if there is none (only a neuronop bug can cause that). */
nopi_core *nopi_self(void);

/*
 * The entry of a kernel API function: declares `c`, the calling core, and, when the run is
 * profiled (neuronop bench), charges the call's host time to a category of the cost model
 * when it returns (and, in a traced run, records a span for the drawn categories: trace.h).
 * Nested calls count once, in the outermost category.  A call that ends
 * its core (nopi_core_fail) is not charged: the core's figures no longer matter.
 */
typedef struct nopi_api_timer {
    nopi_core *c;
    int category;
    double t0;                  /* 0: not timing this call */
    int span;                   /* the kind of trace span this call draws, or -1 */
    nopi_trace_point start;     /* ... and where it starts */
} nopi_api_timer;
nopi_api_timer nopi_api_enter(nopi_core *c, int category, const void *pc);
void nopi_api_leave(nopi_api_timer *t);
#define NOPI_API(c, category) \
    nopi_core *c = nopi_self(); \
    __attribute__((cleanup(nopi_api_leave))) nopi_api_timer nopi_timer_ = \
        nopi_api_enter(c, category, __builtin_return_address(0)); \
    (void)nopi_timer_
/* Each fails the core (does not return) when its rule is broken. */
void nopi_check_tensor(nopi_core *c, const nt_tensor *t, const char *fn);
void nopi_check_data(nopi_core *c, const nt_tensor *t, const char *fn);
/* accessors.c: when t is one of the op's inputs, ", or give the op's argument K ('NAME') as
 * a DTYPE tensor" (want's), the other way out of a dtype mismatch; else "".  Into buf, which
 * it returns. */
const char *nopi_input_hint(const nopi_core *c, const nt_tensor *t, nt_dtype want, char *buf,
                            size_t size);
void nopi_check_writable(nopi_core *c, const nt_tensor *t, const char *fn);
void nopi_single_core_only(nopi_core *c, const char *fn, const char *what);
/* A tensor the kernel makes, owned by its core until the run ends. */
nt_tensor *nopi_new_tensor(nopi_core *c, nt_dtype d, int ndim, const int64_t *sizes,
                           const char *fn);

/* tcm.c: the core's pool.  alloc returns NULL when it cannot serve (as tcm_malloc does);
 * site is the kernel's call, for memcheck's reports (NULL for a stream's buffer).  find
 * returns the live block holding [p, p + n) or -1. */
void *nopi_tcm_alloc(nopi_core *c, size_t nbytes, int stream, const void *site);
int nopi_tcm_find(nopi_core *c, const void *p, size_t n);
/* The largest free block of c's pool, in bytes (for messages). */
size_t nopi_tcm_largest_free(const nopi_core *c);
/* Frees block, and fills its bytes with the pattern again. */
void nopi_tcm_release(nopi_core *c, int block);
/* A store past the end of live block `block`: the first changed byte after what it asked
 * for, near it (a few dozen bytes), as an offset from its start; -1 when none. */
long nopi_tcm_overrun(const nopi_core *c, int block);
/* A store outside every live block's request anywhere in the pool or its guards: true, the
 * changed byte's offset in *at (below 0 or past the pool in a guard), and in *block the
 * live block before it (-1: none); false when none. */
bool nopi_tcm_stray(const nopi_core *c, long *at, int *block);
/* The last changed byte of the 4-byte element of c's pool holding `at` (its first changed
 * one, below 0 in the guard before the pool), counting from at: the range a message names. */
long nopi_tcm_changed_upto(const nopi_core *c, long at);
/* Changed bytes first..last as messages name them: "byte 38" or "bytes 40..43". */
void nopi_tcm_bytes_str(long first, long last, char *buf, size_t size);
/* Bytes kept in the fill pattern just before and just after each core's pool: a store an
 * index outside the pool makes (buf[-1] of its first buffer, buf[n] of one ending at its
 * 16 KB) lands there and is seen, not in the worker's heap unnoticed. */
#define NOPI_TCM_GUARD 64
/* A pool of n bytes with its guards: the pool's start, or NULL on no memory; freed with
 * nopi_tcm_free_pool. */
unsigned char *nopi_tcm_new_pool(size_t n);
void nopi_tcm_free_pool(unsigned char *tcm);
/* Fills a pool of n bytes and its guards with the pattern tcm.c keeps where no block is (a
 * core's first run, a renewed device; later runs fill what they reach). */
void nopi_tcm_fill(unsigned char *tcm, size_t n);
/* Fills the guards of c's pool again: at each run's start, after what an earlier one left. */
void nopi_tcm_fill_guards(nopi_core *c);

/* memcheck.c: the hooks of struct nt__api, nopi_mc_ptr_add and so on (api.h says what each
 * argument is). */
#define NOPI_DECL_HOOK(ret, name, params) ret nopi_##name params;
NT__MEMCHECK_HOOKS(NOPI_DECL_HOOK)
#undef NOPI_DECL_HOOK

/* tensorlib.c */
#define NOPI_DECL_UNARY(n) nt_tensor *nopi_api_##n(const nt_tensor *self); \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self);
#define NOPI_DECL_BINARY(n) \
    nt_tensor *nopi_api_##n(const nt_tensor *self, const nt_tensor *other); \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other); \
    nt_tensor *nopi_api_##n##_s(const nt_tensor *self, nt_scalar other); \
    nt_tensor *nopi_api_##n##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other);
#define NOPI_DECL_ALPHA(n) \
    nt_tensor *nopi_api_##n(const nt_tensor *self, const nt_tensor *other, nt_scalar alpha); \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other, \
                                  nt_scalar alpha); \
    nt_tensor *nopi_api_##n##_s(const nt_tensor *self, nt_scalar other, nt_scalar alpha); \
    nt_tensor *nopi_api_##n##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other, \
                                    nt_scalar alpha);
NOPI_UNARY_OPS(NOPI_DECL_UNARY)
NOPI_BINARY_OPS(NOPI_DECL_BINARY)
NOPI_ALPHA_OPS(NOPI_DECL_ALPHA)
nt_tensor *nopi_api_pow(const nt_tensor *self, nt_scalar e);
nt_tensor *nopi_api_pow_out(nt_tensor *out, const nt_tensor *self, nt_scalar e);
nt_tensor *nopi_api_pow_t(const nt_tensor *self, const nt_tensor *e);
nt_tensor *nopi_api_pow_t_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *e);
nt_tensor *nopi_api_pow_s(nt_scalar self, const nt_tensor *e);
nt_tensor *nopi_api_pow_s_out(nt_tensor *out, nt_scalar self, const nt_tensor *e);
nt_tensor *nopi_api_clamp(const nt_tensor *self, nt_scalar lo, nt_scalar hi);
nt_tensor *nopi_api_clamp_out(nt_tensor *out, const nt_tensor *self, nt_scalar lo, nt_scalar hi);
nt_tensor *nopi_api_full(int ndim, const int64_t *sizes, nt_scalar v, nt_dtype d);
nt_tensor *nopi_api_fill_(nt_tensor *t, nt_scalar v);

/* accessors.c */
void nopi_api_set_coherence(const nt_tensor *t, int policy);
int nopi_api_get_coherence(const nt_tensor *t);
nt_accessor nopi_api_accessor_of(const nt_tensor *t);
nt_read_stream nopi_api_read_stream_of(const nt_tensor *t);
nt_write_stream nopi_api_write_stream_of(const nt_tensor *t);
void nopi_api_stream_close(nt_stream *s);
nt_tcm_accessor nopi_api_tcm_accessor_of(const nt_tensor *t);
void nopi_api_tensor_to_tcm(nt_tcm_accessor *acc, void *buf, int64_t offset, int64_t n);
void nopi_api_tcm_to_tensor(nt_tcm_accessor *acc, const void *buf, int64_t offset, int64_t n);
#define NOPI_DECL_ACCESS(sfx, ctype) \
    ctype nopi_api_get_##sfx(const nt_accessor *a, int nidx, const int64_t *idx); \
    void nopi_api_set_##sfx(const nt_accessor *a, ctype v, int nidx, const int64_t *idx); \
    ctype nopi_api_stream_read_##sfx(nt_read_stream *s); \
    void nopi_api_stream_write_##sfx(nt_write_stream *s, ctype v);
NOPI_DTYPES(NOPI_DECL_ACCESS)
/* cxxcheck.c: the checks torch/torch.h asks for (nt__cxx_check in neuronop.h). */
void nopi_api_cxx_check(int what, const nt_tensor *t, int64_t a, int64_t b);
/* accessors.c: torch's accessor<T, N>()[...] element, a reference (nt__cxx_ref). */
void *nopi_api_cxx_ref(const nt_accessor *a, int nidx, const int64_t *idx, int writable);
/* Checks at a core's end: streams left open, and a write through the last C++ element
 * reference into an input (nt__cxx_ref).  Fails the core. */
void nopi_streams_check_closed(nopi_core *c);

#endif /* NEURONOP_API_IMPL_H */
