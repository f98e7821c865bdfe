/*
 * neuronop.h - the kernel API of neuronop's virtual GPSIMD device.
 *
 * Kernel sources (compute_srcs) and shape sources (shape_srcs) include this one header.  It is
 * the C counterpart of the subset of torch that the real Neuron custom-operator runtime offers
 * on GPSIMD cores, so a kernel written for the device ports to neuronop line by line.  Full
 * documentation, including which device rule each call is checked against: neuronop-api(3).
 *
 * Conventions:
 *   - Tensors are opaque (nt_tensor).  Inputs arrive as `const nt_tensor *` and are read-only.
 *   - Shapes are `int ndim, const int64_t *sizes`; NT_SHAPE(32, 4096) writes both.
 *   - Every element-wise op has a form that allocates its result (nt_exp) and an `_out` form
 *     that writes into a given tensor (nt_exp_out).  Shapes must match: no broadcasting.
 *   - A call that breaks a device rule does not return garbage: the device stops the kernel and
 *     reports the op, the core, the rule and the call.
 *
 * The functions below are provided by the neuronop runtime when the library is loaded; a built
 * library carries small trampolines for them, so it has no link-time dependency on neuronop.
 */
#ifndef NEURONOP_H
#define NEURONOP_H

#include <stddef.h>
#if defined(__TINYC__) && defined(__x86_64__) && defined(__linux__) && !defined(_STDINT_H)
/* The exact-width types, spelt exactly as glibc spells them (so a later <stdint.h> merely
 * repeats them).  glibc's <stdint.h> pulls in a dozen headers and is the largest part of
 * compiling a small kernel; include it yourself for INT32_MAX and the other limits. */
typedef signed char int8_t;
typedef short int int16_t;
typedef int int32_t;
typedef long int int64_t;
typedef unsigned char uint8_t;
typedef unsigned short int uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long int uint64_t;
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types --------------------------------------------------------------------------- */

typedef struct nt_tensor nt_tensor;

/* Element types.  bf16 and f16 are stored as 16-bit values and read and written as float,
 * rounding to nearest even. */
typedef enum nt_dtype {
    NT_F32, NT_BF16, NT_F16, NT_I32, NT_I8, NT_I64, NT_I16, NT_U8
} nt_dtype;

/* A manifest `scalar` argument: a number that is either a double or an int64.  Larger than
 * 16 bytes on purpose, so every compiler passes it in memory the same way. */
typedef struct nt_scalar {
    double f;        /* the value when is_int == 0 */
    int64_t i;       /* the value when is_int == 1 */
    int32_t is_int;
    int32_t is_bool;  /* 1: a C++ bool (torch::Scalar(true), an int 0 or 1), which ATen refuses
                       * as alpha and as what sub subtracts; True or False on the command
                       * line */
} nt_scalar;

static inline nt_scalar nt_scalar_f(double v) { nt_scalar s = { v, 0, 0, 0 }; return s; }
static inline nt_scalar nt_scalar_i(int64_t v) { nt_scalar s = { 0.0, v, 1, 0 }; return s; }
static inline double nt_scalar_to_f(nt_scalar s) { return s.is_int ? (double)s.i : s.f; }
static inline int64_t nt_scalar_to_i(nt_scalar s) { return s.is_int ? s.i : (int64_t)s.f; }

/* NT_SHAPE(32, 4096) expands to `2, (const int64_t[]){32, 4096}`: the (ndim, sizes) pair. */
#define NT__NARG(...) NT__NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NT__NARG_(a1, a2, a3, a4, a5, a6, a7, a8, n, ...) n
#define NT_SHAPE(...) NT__NARG(__VA_ARGS__), (const int64_t[]){ __VA_ARGS__ }

/* ---- shapes -------------------------------------------------------------------------- */

int64_t nt_numel(const nt_tensor *t);                 /* number of elements */
int nt_dim(const nt_tensor *t);                       /* number of dimensions */
int64_t nt_size(const nt_tensor *t, int dim);         /* size of dim; dim < 0 counts from the end */
const int64_t *nt_sizes(const nt_tensor *t);          /* nt_dim(t) sizes, owned by t */
nt_dtype nt_dtype_of(const nt_tensor *t);

/* ---- tensor library: factories ------------------------------------------------------ */
/* Each returns a new tensor owned by the device for the rest of the op. */

nt_tensor *nt_empty(int ndim, const int64_t *sizes, nt_dtype dtype);
nt_tensor *nt_zeros(int ndim, const int64_t *sizes, nt_dtype dtype);
nt_tensor *nt_ones(int ndim, const int64_t *sizes, nt_dtype dtype);
nt_tensor *nt_full(int ndim, const int64_t *sizes, nt_scalar value, nt_dtype dtype);
nt_tensor *nt_eye(int64_t n, int64_t m, nt_dtype dtype);        /* 2-D identity, n x m */
nt_tensor *nt_fill_(nt_tensor *t, nt_scalar value);             /* returns t */

/* ---- tensor library: element-wise ops ------------------------------------------------ */
/* Each computes what ATen computes: the result dtype by torch's type promotion, integers in
 * their own width (wrapping), floats in float, Scalars and alpha converted to the op's dtype;
 * where torch raises, the device stops the core with torch's reason (neuronop-api(3)). */

#define NT__UNARY(name) \
    nt_tensor *nt_##name(const nt_tensor *self); \
    nt_tensor *nt_##name##_out(nt_tensor *out, const nt_tensor *self);
NT__UNARY(abs) NT__UNARY(ceil) NT__UNARY(floor) NT__UNARY(sin) NT__UNARY(cos) NT__UNARY(tan)
NT__UNARY(log) NT__UNARY(log2) NT__UNARY(log10) NT__UNARY(exp)
#undef NT__UNARY

nt_tensor *nt_pow(const nt_tensor *self, nt_scalar exponent);            /* tensor ^ scalar */
nt_tensor *nt_pow_out(nt_tensor *out, const nt_tensor *self, nt_scalar exponent);
nt_tensor *nt_pow_t(const nt_tensor *self, const nt_tensor *exponent);   /* tensor ^ tensor */
nt_tensor *nt_pow_t_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *exponent);
nt_tensor *nt_pow_s(nt_scalar self, const nt_tensor *exponent);          /* scalar ^ tensor */
nt_tensor *nt_pow_s_out(nt_tensor *out, nt_scalar self, const nt_tensor *exponent);

nt_tensor *nt_clamp(const nt_tensor *self, nt_scalar min, nt_scalar max);
nt_tensor *nt_clamp_out(nt_tensor *out, const nt_tensor *self, nt_scalar min, nt_scalar max);

/* self + alpha * other, self - alpha * other */
nt_tensor *nt_add(const nt_tensor *self, const nt_tensor *other, nt_scalar alpha);
nt_tensor *nt_add_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other, nt_scalar alpha);
nt_tensor *nt_add_s(const nt_tensor *self, nt_scalar other, nt_scalar alpha);
nt_tensor *nt_add_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other, nt_scalar alpha);
nt_tensor *nt_sub(const nt_tensor *self, const nt_tensor *other, nt_scalar alpha);
nt_tensor *nt_sub_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other, nt_scalar alpha);
nt_tensor *nt_sub_s(const nt_tensor *self, nt_scalar other, nt_scalar alpha);
nt_tensor *nt_sub_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other, nt_scalar alpha);

#define NT__BINARY(name) \
    nt_tensor *nt_##name(const nt_tensor *self, const nt_tensor *other); \
    nt_tensor *nt_##name##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other); \
    nt_tensor *nt_##name##_s(const nt_tensor *self, nt_scalar other); \
    nt_tensor *nt_##name##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other);
NT__BINARY(mul) NT__BINARY(div)
NT__BINARY(bitwise_and) NT__BINARY(bitwise_or)        /* integral dtypes only */
#undef NT__BINARY
nt_tensor *nt_bitwise_not(const nt_tensor *self);
nt_tensor *nt_bitwise_not_out(nt_tensor *out, const nt_tensor *self);

/* ---- device services (the real runtime's names) ------------------------------------- */

void *tcm_malloc(size_t nbytes);      /* from this core's 16 KB TCM pool; NULL when it cannot */
void tcm_free(void *ptr);             /* ptr must come from tcm_malloc on this core */
uint32_t get_cpu_id(void);            /* 0 .. get_cpu_count() - 1 */
uint32_t get_cpu_count(void);
#ifndef NT__TORCH_API                 /* torch/torch.h declares its own, returning a Tensor */
nt_tensor *get_dst_tensor(void);      /* the op's output, shaped by the shape function */
#endif

/* printf goes to the device's ring buffer, shown after the op (only core 0 in multicore). */
int nt_printf(const char *fmt, ...);
#ifndef NT_RUNTIME                    /* libneuronop itself keeps libc's printf */
#define printf nt_printf
#endif

/* abort() and assert() (from <stdlib.h> and <assert.h>) may be used in kernels: the device
 * stops the core and reports the failed assertion with its file and line. */

/* For torch/torch.h, the C++ layer: checks torch makes that the C API leaves to each call.
 * `what` is one of the NT__CXX_* below; returns when the rule holds and otherwise stops the
 * core with a message that names the C++ call (neuronop-cxx(3)).  Not for C kernels. */
enum {
    NT__CXX_ACCESSOR,       /* t.accessor<T, N>(): a = N, b = T's dtype */
    NT__CXX_READ_STREAM,    /* t.read_stream_accessor<T>(): b = T's dtype */
    NT__CXX_WRITE_STREAM,   /* t.write_stream_accessor<T>(): b = T's dtype */
    NT__CXX_TO_TCM,         /* tcm_accessor().tensor_to_tcm<T>(): b = T's dtype */
    NT__CXX_FROM_TCM,       /* tcm_accessor().tcm_to_tensor<T>(): b = T's dtype */
    NT__CXX_SIZES,          /* t.sizes()[a] (t may be NULL: a list of b sizes) */
    NT__CXX_SCALAR,         /* a Scalar to dtype b & 255 (an int64 a if b & 256, else a
                             * double's bits): stops the core unless c10 allows it */
    NT__CXX_BOOL_FULL,      /* torch::full() of a bool without a dtype: a bool tensor in
                             * torch, which the device does not have; always stops the core */
    NT__CXX_BOOL_SCALAR,    /* what c10 refuses of a bool torch::Scalar: -s (a = 0) or
                             * s.log() (a = 1); always stops the core */
    NT__CXX_UNKNOWN_TYPE,   /* c10::elementSize() of a ScalarType the subset does not have
                             * (a = its number); always stops the core */
    NT__CXX_SLICE,          /* IntArrayRef::slice(N, M) past the end of its list: a = N,
                             * b = M << 4 | the list's size (at most 8); always stops the core */
    NT__CXX_DIM             /* t.size(a) with an a no int holds (nt_size takes an int, which
                             * would wrap it onto a dimension); always stops the core */
};
void nt__cxx_check(int what, const nt_tensor *t, int64_t a, int64_t b);

/* Raw 16-bit float conversions for TCM buffers of bf16 and f16 tensors. */
uint16_t nt_f32_to_bf16(float v);
float nt_bf16_to_f32(uint16_t v);
uint16_t nt_f32_to_f16(float v);
float nt_f16_to_f32(uint16_t v);

/* ---- accessors ----------------------------------------------------------------------- */
/* Accessor objects are small handles; their fields are the runtime's, not the kernel's. */

typedef struct nt_accessor { const nt_tensor *t_; int64_t id_; } nt_accessor;
typedef struct nt_stream { const nt_tensor *t_; int64_t id_; } nt_stream;
typedef nt_stream nt_read_stream;
typedef nt_stream nt_write_stream;
typedef struct nt_tcm_accessor { const nt_tensor *t_; int64_t id_; } nt_tcm_accessor;

/* Coherence policy of a tensor, for streaming and standard accessors (gpsimd.md). */
enum { NT_COHERENT = 0, NT_INCOHERENT_VERBOSE = 1, NT_INCOHERENT_QUIET = 2 };
void nt_set_coherence(const nt_tensor *t, int policy);
int nt_get_coherence(const nt_tensor *t);            /* the tensor's policy */

/* Standard accessor: element-wise random access; single-core only; the slowest path.
 *     nt_accessor a = nt_accessor_of(t);
 *     float v = nt_get_f32(&a, i, j);    nt_set_f32(&a, v, i, j);
 * Give exactly nt_dim(t) indices. */
nt_accessor nt_accessor_of(const nt_tensor *t);
/* For torch/torch.h's accessor<T, N>()[i]...[k]: checks and counts one element access (as
 * nt_get_* does) and returns where the element lives, for the T & (or const T &, when
 * writable is 0) that torch gives.  Not for C kernels. */
void *nt__cxx_ref(const nt_accessor *a, int nidx, const int64_t *idx, int writable);

/* Streaming accessors: strictly sequential; each open stream holds 4 KB of the TCM pool;
 * nt_stream_close flushes writes.  Single-core only. */
nt_read_stream nt_read_stream_of(const nt_tensor *t);
nt_write_stream nt_write_stream_of(const nt_tensor *t);
void nt_stream_close(nt_stream *s);

/* TCM accessor: bulk copies between a tensor and a tcm_malloc buffer; offsets and counts in
 * elements of the flattened tensor.  The fast path, and the only one allowed in multicore. */
nt_tcm_accessor nt_tcm_accessor_of(const nt_tensor *t);
void nt_tensor_to_tcm(nt_tcm_accessor *acc, void *buf, int64_t offset, int64_t n);
void nt_tcm_to_tensor(nt_tcm_accessor *acc, const void *buf, int64_t offset, int64_t n);

/* One get/set pair and one stream read/write pair per dtype suffix.  The index lists are
 * turned into arrays by the macros below, so plain int literals are fine. */
#define NT__ACCESS(sfx, ctype) \
    ctype nt__get_##sfx(const nt_accessor *a, int nidx, const int64_t *idx); \
    void nt__set_##sfx(const nt_accessor *a, ctype v, int nidx, const int64_t *idx); \
    ctype nt_stream_read_##sfx(nt_read_stream *s); \
    void nt_stream_write_##sfx(nt_write_stream *s, ctype v);
NT__ACCESS(f32, float) NT__ACCESS(bf16, float) NT__ACCESS(f16, float)
NT__ACCESS(i32, int32_t) NT__ACCESS(i8, int8_t) NT__ACCESS(i64, int64_t)
NT__ACCESS(i16, int16_t) NT__ACCESS(u8, uint8_t)
#undef NT__ACCESS

#define NT__IDX(...) NT__NARG(__VA_ARGS__), (const int64_t[]){ __VA_ARGS__ }
#define nt_get_f32(a, ...)     nt__get_f32((a), NT__IDX(__VA_ARGS__))
#define nt_get_bf16(a, ...)    nt__get_bf16((a), NT__IDX(__VA_ARGS__))
#define nt_get_f16(a, ...)     nt__get_f16((a), NT__IDX(__VA_ARGS__))
#define nt_get_i32(a, ...)     nt__get_i32((a), NT__IDX(__VA_ARGS__))
#define nt_get_i8(a, ...)      nt__get_i8((a), NT__IDX(__VA_ARGS__))
#define nt_get_i64(a, ...)     nt__get_i64((a), NT__IDX(__VA_ARGS__))
#define nt_get_i16(a, ...)     nt__get_i16((a), NT__IDX(__VA_ARGS__))
#define nt_get_u8(a, ...)      nt__get_u8((a), NT__IDX(__VA_ARGS__))
#define nt_set_f32(a, v, ...)  nt__set_f32((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_bf16(a, v, ...) nt__set_bf16((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_f16(a, v, ...)  nt__set_f16((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_i32(a, v, ...)  nt__set_i32((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_i8(a, v, ...)   nt__set_i8((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_i64(a, v, ...)  nt__set_i64((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_i16(a, v, ...)  nt__set_i16((a), (v), NT__IDX(__VA_ARGS__))
#define nt_set_u8(a, v, ...)   nt__set_u8((a), (v), NT__IDX(__VA_ARGS__))

#ifdef __cplusplus
}
#endif

#endif /* NEURONOP_H */
