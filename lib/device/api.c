/*
 * api.c - the kernel API of neuronop.h as the virtual device implements it, and the table of
 * it that built libraries jump through (nopi_api_table).
 *
 * Every call finds its core through nopi_current(), checks what the kernel gave it against
 * the device's rules, and ends the core with a message naming the call and its arguments
 * (nopi_core_fail) rather than touch memory it should not.  Element-wise tensor-library ops
 * are in tensorlib.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "fiber.h"
#include "outtrack.h"

/* ---- shared checks ---------------------------------------------------------------------- */

nopi_core *nopi_self(void)
{
    nopi_core *c = nopi_current();
    if (!c) {   /* only neuronop calls kernels; anything else is a neuronop bug */
        fputs("neuronop: internal error: kernel API called outside a run\n", stderr);
        abort();
    }
    return c;
}

nopi_api_timer nopi_api_enter(nopi_core *c, int category, const void *pc)
{
    nopi_api_timer t = { c, category, 0, -1, { 0, 0, 0 } };
    if (c->api_depth++ != 0)
        return t;
    /* called from the user's code: its frame is just above this one, so this frame below
     * the stack means a frame that skipped the guard (written or not: nothing faulted) */
    if ((uintptr_t)__builtin_frame_address(0) < (uintptr_t)c->stack.lo) {
        c->api_depth = 0;
        nopi_core_fail_stack(c);
    }
    c->call_pc = pc;   /* the kernel's call (a trampoline jumps: no frame of its own) */
    if (c->run->profiled) {
        t.t0 = nopi_now();
        if (c->run->traced && !c->shape_mode && (t.span = nopi_trace_kind_of(category)) >= 0)
            t.start = nopi_trace_at(c, t.t0);
    }
    return t;
}

void nopi_api_leave(nopi_api_timer *t)
{
    if (--t->c->api_depth != 0)
        return;
    t->c->call_pc = NULL;
    if (t->t0 > 0) {
        double now = nopi_now();
        t->c->api_seconds[t->category] += now - t->t0;
        if (t->span >= 0)
            nopi_trace_span_end(t->c, t->span, -1, t->start, now);
    }
}

void nopi_check_tensor(nopi_core *c, const nt_tensor *t, const char *fn)
{
    if (!t)
        nopi_core_fail(c, "%s: the tensor is NULL", fn);
    if (t->magic != NOPI_TENSOR_MAGIC)
        nopi_core_fail(c, "%s: %p is not a tensor (freed, or a pointer to something else)",
                       fn, (const void *)t);
}

void nopi_check_data(nopi_core *c, const nt_tensor *t, const char *fn)
{
    nopi_check_tensor(c, t, fn);
    if (c->shape_mode || t->shape_only)
        nopi_core_fail(c, "%s: shape function '%s' touches tensor data; shape functions see "
                       "only shapes and dtypes", fn, c->run->op->shape);
}

void nopi_check_writable(nopi_core *c, const nt_tensor *t, const char *fn)
{
    nopi_check_data(c, t, fn);
    if (t->readonly && (c->run->checks & NOP_CHECK_READONLY))
        nopi_core_fail(c, "%s: writes to an input tensor; inputs are read-only (write the "
                       "output from get_dst_tensor, or a tensor the kernel made)", fn);
}

static void on_device_only(nopi_core *c, const char *fn)
{
    if (c->shape_mode)
        nopi_core_fail(c, "%s: shape function '%s' calls a device service; shape functions "
                       "run on the host and only describe the output", fn, c->run->op->shape);
}

static void single_core_only(nopi_core *c, const char *fn, const char *what)
{
    if (c->run->multicore && (c->run->checks & NOP_CHECK_MULTICORE))
        nopi_core_fail(c, "%s: %s in a multicore kernel; only TCM accessors may touch tensors "
                       "in multicore mode (on the device this gives wrong results)", fn, what);
}

typedef struct new_tensor {
    nt_dtype d;
    int ndim;
    const int64_t *sizes;
    const char *fn;
    nt_tensor *t;
} new_tensor;

static void new_tensor_here(nopi_core *c, void *p)
{
    new_tensor *a = p;
    nt_dtype d = a->d;
    int ndim = a->ndim;
    const int64_t *sizes = a->sizes;
    const char *fn = a->fn;
    if ((int)d == 100 + 7)   /* torch/detail/types.h's number for c10's Double, which the
                              * message once showed as is (an idioms tester's find) */
        nopi_core_fail(c, "%s: float64 (kDouble) is no dtype of the device's: its dtypes are "
                       "kFloat, kBFloat16, kHalf, kInt, kChar, kLong, kShort and kByte", fn);
    if ((unsigned)d > NT_U8)
        nopi_core_fail(c, "%s: %d is not a dtype (NT_F32 ... NT_U8)", fn, (int)d);
    if (ndim < 0 || ndim > NOPI_MAX_DIMS || (ndim > 0 && !sizes))
        nopi_core_fail(c, "%s: %d dimensions; tensors have 0 to %d", fn, ndim, NOPI_MAX_DIMS);
    char why[256];
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0) {   /* in ATen's words (check_size_nonnegative) */
            size_t used = (size_t)snprintf(why, sizeof why, "[");
            for (int k = 0; k < ndim && used < sizeof why; k++)
                used += (size_t)snprintf(why + used, sizeof why - used, "%s%lld",
                                         k ? ", " : "", (long long)sizes[k]);
            if (used < sizeof why)
                snprintf(why + used, sizeof why - used, "]");
            nopi_core_fail(c, "%s: Trying to create tensor with negative dimension %lld: %s",
                           fn, (long long)sizes[i], why);
        }
    if (!nopi_shape_ok(ndim, sizes, why, sizeof why))
        nopi_core_fail(c, "%s: shape over the device's limits: %s", fn, why);
    nt_tensor *t = nopi_tensor_alloc(d, ndim, sizes, c->shape_mode);
    if (!t)
        nopi_core_fail(c, "%s: out of device memory for a tensor of %d dimensions", fn, ndim);
    t->next = c->owned;
    c->owned = t;
    a->t = t;
}

nt_tensor *nopi_new_tensor(nopi_core *c, nt_dtype d, int ndim, const int64_t *sizes,
                           const char *fn)
{
    new_tensor a = { d, ndim, sizes, fn, NULL };
    nopi_runtime_call(c, new_tensor_here, &a);   /* its checks' buffers, malloc's frames */
    return a.t;
}

/* ---- shapes ----------------------------------------------------------------------------- */

static int64_t api_numel(const nt_tensor *t)
{
    nopi_check_tensor(nopi_self(), t, "nt_numel");
    return t->numel;
}

static int api_dim(const nt_tensor *t)
{
    nopi_check_tensor(nopi_self(), t, "nt_dim");
    return t->ndim;
}

static int64_t api_size(const nt_tensor *t, int dim)
{
    NOPI_API(c, NOP_COST_OTHER);
    nopi_check_tensor(c, t, "nt_size");
    int d = dim < 0 ? dim + t->ndim : dim;
    if (d < 0 || d >= t->ndim)
        nopi_core_fail(c, "nt_size(dim=%d): the tensor has %d dimension%s", dim, t->ndim,
                       t->ndim == 1 ? "" : "s");
    return t->sizes[d];
}

static const int64_t *api_sizes(const nt_tensor *t)
{
    nopi_core *c = nopi_self();
    nopi_check_tensor(c, t, "nt_sizes");
    nopi_memcheck_array(c, t->sizes, (size_t)t->ndim * sizeof *t->sizes, "nt_sizes");
    return t->sizes;
}

static nt_dtype api_dtype_of(const nt_tensor *t)
{
    nopi_check_tensor(nopi_self(), t, "nt_dtype_of");
    return t->dtype;
}

/* ---- factories -------------------------------------------------------------------------- */

/* A factory that writes a tensor's elements is the tensor library writing device memory,
 * which a multicore kernel may not (tensorlib.c's touches_data; a red team's find: nt_ones
 * and nt_eye ran on every core where nt_full was refused).  A shape function's tensor has
 * no elements to write. */
static nt_tensor *factory_writes(nopi_core *c, nt_tensor *t, const char *fn)
{
    if (!t->shape_only)
        single_core_only(c, fn, "the tensor library");
    return t;
}

static nt_tensor *fill(nopi_core *c, nt_tensor *t, nt_scalar v)
{
    if (t->shape_only)
        return t;
    for (int64_t i = 0; i < t->numel; i++) {
        if (v.is_int)
            nopi_set_i(t, i, v.i);
        else
            nopi_set_f(t, i, v.f);
    }
    nopi_count_tensorlib(c, t);
    return t;
}

static nt_tensor *api_empty(int ndim, const int64_t *sizes, nt_dtype d)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    nt_tensor *t = nopi_new_tensor(c, d, ndim, sizes, "nt_empty");
    if (!t->shape_only)   /* its elements are unset, as on the device: not zeros */
        memset(t->data, NOPI_UNSET_BYTE, (size_t)t->numel * t->itemsize);
    return t;
}

static nt_tensor *api_zeros(int ndim, const int64_t *sizes, nt_dtype d)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    /* (allocated zeroed; the device writes them) */
    nt_tensor *t = factory_writes(c, nopi_new_tensor(c, d, ndim, sizes, "nt_zeros"), "nt_zeros");
    if (!t->shape_only)
        nopi_count_tensorlib(c, t);
    return t;
}

static nt_tensor *api_ones(int ndim, const int64_t *sizes, nt_dtype d)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    nt_tensor *t = factory_writes(c, nopi_new_tensor(c, d, ndim, sizes, "nt_ones"), "nt_ones");
    return fill(c, t, nt_scalar_i(1));
}

static nt_tensor *api_eye(int64_t n, int64_t m, nt_dtype d)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    if (n < 0 || m < 0)   /* ATen's words, before it makes the tensor */
        nopi_core_fail(c, "nt_eye(%lld, %lld): %s must be greater or equal to 0, got %lld",
                       (long long)n, (long long)m, n < 0 ? "n" : "m",
                       (long long)(n < 0 ? n : m));
    if (d == NT_BF16)   /* ATen 1.13's eye has no bfloat16 kernel (a C++ helper's find) */
        nopi_core_fail(c, "nt_eye(%lld, %lld, NT_BF16): \"eye\" not implemented for "
                       "'BFloat16'", (long long)n, (long long)m);
    int64_t sizes[2] = { n, m };
    nt_tensor *t = factory_writes(c, nopi_new_tensor(c, d, 2, sizes, "nt_eye"), "nt_eye");
    if (!t->shape_only) {
        for (int64_t i = 0; i < n && i < m; i++)
            nopi_set_i(t, i * m + i, 1);
        nopi_count_tensorlib(c, t);
    }
    return t;
}

/* ---- device services -------------------------------------------------------------------- */

static void *api_tcm_malloc(size_t nbytes)
{
    NOPI_API(c, NOP_COST_TCM);
    on_device_only(c, "tcm_malloc");
    /* the trampoline jumped here, so this returns straight to the kernel's call */
    const void *site = __builtin_return_address(0);
    void *p = nopi_tcm_alloc(c, nbytes, -1, site);
    if (!p && nbytes && !c->tcm_null) {   /* the device returns NULL too: say so, once */
        c->tcm_null = nbytes;
        c->tcm_null_site = site;
        long long pool = c->run->profile->tcm_bytes;
        nopi_core_warn(c, "tcm_malloc(%zu) returned NULL: the core's %lld-byte TCM pool has "
                       "%lld bytes free, the largest free block %zu; check what tcm_malloc "
                       "returns, or ask for less", nbytes, pool,
                       pool - (long long)c->tcm_used, nopi_tcm_largest_free(c));
    }
    return p;
}

static void api_tcm_free(void *ptr)
{
    NOPI_API(c, NOP_COST_TCM);
    on_device_only(c, "tcm_free");
    if (!ptr)
        return;
    int b = nopi_tcm_find(c, ptr, 0);
    if (b < 0 || c->tcm + c->blocks[b].offset != (unsigned char *)ptr)
        nopi_core_fail(c, "tcm_free(%p): not a pointer tcm_malloc returned on this core, or "
                       "already freed", ptr);
    if (c->blocks[b].stream >= 0)
        nopi_core_fail(c, "tcm_free(%p): this TCM belongs to an open stream; close the stream "
                       "instead", ptr);
    long at = nopi_tcm_overrun(c, b);
    if (at >= 0) {
        long last = nopi_tcm_changed_upto(c, (long)c->blocks[b].offset + at) -
                    (long)c->blocks[b].offset;
        char bytes[64];
        nopi_tcm_bytes_str(at, last, bytes, sizeof bytes);
        nopi_core_fail(c, "tcm_free(%p): a store past the end of this %u-byte TCM buffer "
                       "changed %s of it (only bytes [0, %u) are the buffer's: an index past "
                       "its end?%s)", ptr, c->blocks[b].req, bytes, c->blocks[b].req,
                       c->run->memcheck ? "" : "  --memcheck finds the line");
    }
    nopi_tcm_release(c, b);
}

static uint32_t api_get_cpu_id(void)
{
    NOPI_API(c, NOP_COST_OTHER);
    on_device_only(c, "get_cpu_id");
    return c->id;
}

static uint32_t api_get_cpu_count(void)
{
    NOPI_API(c, NOP_COST_OTHER);
    on_device_only(c, "get_cpu_count");
    return c->count;
}

static nt_tensor *api_get_dst_tensor(void)
{
    NOPI_API(c, NOP_COST_OTHER);
    on_device_only(c, "get_dst_tensor");
    if (!c->run->dst)   /* a reference's run: no shape function declared an output */
        nopi_core_fail(c, "get_dst_tensor: reference function '%s' has no destination tensor; "
                       "a reference runs none of its op's code, so it makes its output "
                       "(nt_empty) and returns it", c->run->ref_name);
    c->dst_called = true;
    return c->run->dst;
}

typedef struct print_job {
    const char *fmt;
    va_list *ap;
    int result;
} print_job;

/* Runs on the host stack: glibc's formatting needs kilobytes a 6 KB kernel stack lacks. */
static void format_into_ring(nopi_core *c, void *arg)
{
    print_job *job = arg;
    char small[1024], *buf = small;
    va_list ap;
    va_copy(ap, *job->ap);
    int n = vsnprintf(small, sizeof small, job->fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL) {
        va_copy(ap, *job->ap);
        vsnprintf(buf, (size_t)n + 1, job->fmt, ap);
        va_end(ap);
    }
    if (n > 0)
        nopi_ring_write(c->run, buf ? buf : small, buf ? (size_t)n : sizeof small - 1);
    if (buf != small)
        free(buf);
    job->result = n;
}

static int api_printf(const char *fmt, ...)
{
    NOPI_API(c, NOP_COST_PRINTF);
    c->n.printf_calls++;   /* printf costs time on the device even when dropped */
    if (!fmt)
        nopi_core_fail(c, "printf: the format is NULL");
    if (c->run->multicore && c->id != 0) {
        pthread_mutex_lock(&c->run->diag_lock);
        bool first = !c->run->warned_printf;
        c->run->warned_printf = true;
        pthread_mutex_unlock(&c->run->diag_lock);
        if (first && (c->run->checks & NOP_CHECK_PRINTF))
            nopi_core_warn(c, "printf from core %u dropped: only core 0 may print in "
                           "multicore mode (on the device too)", c->id);
        return 0;
    }
    va_list ap;
    va_start(ap, fmt);
    print_job job = { fmt, &ap, 0 };
    if (c->shape_mode)
        format_into_ring(c, &job);
    else
        nopi_on_host_stack(c, format_into_ring, &job);
    va_end(ap);
    return job.result;
}

/* abort() and a failed assert() stop the core, naming the assertion and where it is. */
static void api_abort(void)
{
    nopi_core_fail(nopi_self(), "the kernel called abort()");
}

static void api_assert_fail(const char *assertion, const char *file, unsigned int line,
                            const char *function)
{
    nopi_core_fail(nopi_self(), "assertion failed: %s (%s:%u, in %s)",
                   assertion ? assertion : "?", file ? file : "?", line,
                   function ? function : "?");
}

static uint16_t api_f32_to_bf16(float v) { return nopi_f32_to_bf16(v); }
static float api_bf16_to_f32(uint16_t v) { return nopi_bf16_to_f32(v); }
static uint16_t api_f32_to_f16(float v) { return nopi_f32_to_f16(v); }
static float api_f16_to_f32(uint16_t v) { return nopi_f16_to_f32(v); }

/* ---- the table -------------------------------------------------------------------------- */

const struct nt__api nopi_api_table = {
    .nt_numel = api_numel, .nt_dim = api_dim, .nt_size = api_size, .nt_sizes = api_sizes,
    .nt_dtype_of = api_dtype_of,
    .nt_empty = api_empty, .nt_zeros = api_zeros, .nt_ones = api_ones, .nt_full = nopi_api_full,
    .nt_eye = api_eye, .nt_fill_ = nopi_api_fill_,
#define UNARY(n) .nt_##n = nopi_api_##n, .nt_##n##_out = nopi_api_##n##_out,
#define BINARY(n) .nt_##n = nopi_api_##n, .nt_##n##_out = nopi_api_##n##_out, \
    .nt_##n##_s = nopi_api_##n##_s, .nt_##n##_s_out = nopi_api_##n##_s_out,
    NOPI_UNARY_OPS(UNARY)
    NOPI_BINARY_OPS(BINARY)
    NOPI_ALPHA_OPS(BINARY)
#undef UNARY
#undef BINARY
    .nt_pow = nopi_api_pow, .nt_pow_out = nopi_api_pow_out, .nt_pow_t = nopi_api_pow_t,
    .nt_pow_t_out = nopi_api_pow_t_out, .nt_pow_s = nopi_api_pow_s,
    .nt_pow_s_out = nopi_api_pow_s_out, .nt_clamp = nopi_api_clamp,
    .nt_clamp_out = nopi_api_clamp_out,
    .tcm_malloc = api_tcm_malloc, .tcm_free = api_tcm_free, .get_cpu_id = api_get_cpu_id,
    .get_cpu_count = api_get_cpu_count, .get_dst_tensor = api_get_dst_tensor,
    .nt_printf = api_printf, .abort = api_abort, .__assert_fail = api_assert_fail,
    .nt_f32_to_bf16 = api_f32_to_bf16, .nt_bf16_to_f32 = api_bf16_to_f32,
    .nt_f32_to_f16 = api_f32_to_f16, .nt_f16_to_f32 = api_f16_to_f32,
    .nt_set_coherence = nopi_api_set_coherence, .nt_get_coherence = nopi_api_get_coherence,
    .nt__cxx_check = nopi_api_cxx_check, .nt_accessor_of = nopi_api_accessor_of,
    .nt__cxx_ref = nopi_api_cxx_ref,
    .nt_read_stream_of = nopi_api_read_stream_of, .nt_write_stream_of = nopi_api_write_stream_of,
    .nt_stream_close = nopi_api_stream_close, .nt_tcm_accessor_of = nopi_api_tcm_accessor_of,
    .nt_tensor_to_tcm = nopi_api_tensor_to_tcm, .nt_tcm_to_tensor = nopi_api_tcm_to_tensor,
#define ACCESS(sfx, ctype) .nt__get_##sfx = nopi_api_get_##sfx, .nt__set_##sfx = nopi_api_set_##sfx, \
    .nt_stream_read_##sfx = nopi_api_stream_read_##sfx, \
    .nt_stream_write_##sfx = nopi_api_stream_write_##sfx,
    NOPI_DTYPES(ACCESS)
#undef ACCESS
#define HOOK(ret, name, params) .name = nopi_##name,
    NT__MEMCHECK_HOOKS(HOOK)
#undef HOOK
};

void nopi_single_core_only(nopi_core *c, const char *fn, const char *what)
{
    single_core_only(c, fn, what);
}

const char *const nop_check_names[] = {
    "race", "unwritten", "init", "dst", "multicore", "coherence", "readonly", "leak",
    "streams", "printf", NULL
};

unsigned nop_check_parse(const char *name)
{
    if (strcmp(name, "all") == 0)
        return NOP_CHECK_ALL;
    for (unsigned i = 0; nop_check_names[i]; i++)
        if (strcmp(name, nop_check_names[i]) == 0)
            return 1u << i;
    return 0;
}
