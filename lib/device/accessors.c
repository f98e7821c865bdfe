/*
 * accessors.c - the three ways a kernel reaches tensor data (gpsimd.md "Memory and
 * accessors"), each checked: standard accessors (element-wise; single-core), streaming
 * accessors (sequential; single-core; 4 KB of TCM each while open) and TCM accessors (bulk
 * copies between a tensor and a tcm_malloc buffer; the only kind allowed in multicore).
 * Coherence: mixing standard and streaming access to one tensor, or a write stream beside
 * another stream on it, is possibly incoherent on the device; the tensor's policy decides
 * whether that is an error, a warning or allowed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "outtrack.h"

static nopi_track *track(nopi_core *c, const nt_tensor *t)
{
    nt_tensor *mt = (nt_tensor *)t;   /* bookkeeping only; the data stays untouched */
    if (!mt->track) {
        pthread_mutex_lock(&c->run->diag_lock);
        if (!mt->track)
            mt->track = calloc(1, sizeof *mt->track);
        pthread_mutex_unlock(&c->run->diag_lock);
        if (!mt->track)
            nopi_core_fail(c, "out of memory");
    }
    return mt->track;
}

/* A possibly incoherent access: what happens depends on the tensor's policy. */
static void incoherent(nopi_core *c, const nt_tensor *t, const char *fn, const char *what)
{
    nopi_track *tr = track(c, t);
    if (t->coherence == NT_INCOHERENT_QUIET || !(c->run->checks & NOP_CHECK_COHERENCE))
        return;
    if (t->coherence == NT_INCOHERENT_VERBOSE) {
        if (!tr->warned)
            nopi_core_warn(c, "%s: possibly incoherent access: %s (allowed: the tensor's "
                           "policy is NT_INCOHERENT_VERBOSE)", fn, what);
        tr->warned = true;
        return;
    }
    nopi_core_fail(c, "%s: possibly incoherent access: %s; use many read streams or one write "
                   "stream per tensor and no standard accessor beside them, or relax the "
                   "tensor's policy with nt_set_coherence", fn, what);
}

void nopi_api_set_coherence(const nt_tensor *t, int policy)
{
    NOPI_API(c, NOP_COST_OTHER);
    nopi_check_tensor(c, t, "nt_set_coherence");
    if (policy != NT_COHERENT && policy != NT_INCOHERENT_VERBOSE && policy != NT_INCOHERENT_QUIET)
        nopi_core_fail(c, "nt_set_coherence(policy=%d): the policies are NT_COHERENT, "
                       "NT_INCOHERENT_VERBOSE and NT_INCOHERENT_QUIET", policy);
    ((nt_tensor *)t)->coherence = policy;
}

int nopi_api_get_coherence(const nt_tensor *t)
{
    NOPI_API(c, NOP_COST_OTHER);
    nopi_check_tensor(c, t, "nt_get_coherence");
    return t->coherence;
}

/* ---- standard accessors ----------------------------------------------------------------- */

nt_accessor nopi_api_accessor_of(const nt_tensor *t)
{
    NOPI_API(c, NOP_COST_STD);
    nopi_check_data(c, t, "nt_accessor_of");
    nopi_single_core_only(c, "nt_accessor_of", "a standard accessor");
    nopi_track *tr = track(c, t);
    if (tr->read_streams || tr->write_streams)
        incoherent(c, t, "nt_accessor_of", "a standard accessor on a tensor with an open "
                   "stream");
    tr->std_uses++;
    nt_accessor a = { t, 0 };
    return a;
}

/* The C API's name of a read of one element of each dtype: what a C++ element reference's
 * messages name (cxxnames.c words it as accessor<T, N>()[...]). */
static const char *const get_name[] = {
    [NT_F32] = "nt_get_f32", [NT_BF16] = "nt_get_bf16", [NT_F16] = "nt_get_f16",
    [NT_I32] = "nt_get_i32", [NT_I8] = "nt_get_i8", [NT_I64] = "nt_get_i64",
    [NT_I16] = "nt_get_i16", [NT_U8] = "nt_get_u8",
};
static const char *const set_name[] = {
    [NT_F32] = "nt_set_f32", [NT_BF16] = "nt_set_bf16", [NT_F16] = "nt_set_f16",
    [NT_I32] = "nt_set_i32", [NT_I8] = "nt_set_i8", [NT_I64] = "nt_set_i64",
    [NT_I16] = "nt_set_i16", [NT_U8] = "nt_set_u8",
};

/* (a new user passed an int32 tensor to a float kernel and was told only to change the
 * kernel) */
const char *nopi_input_hint(const nopi_core *c, const nt_tensor *t, nt_dtype want, char *buf,
                            size_t size)
{
    const nopi_run *run = c->run;
    const nt__op_desc *op = run->op;
    buf[0] = '\0';
    for (int k = 0; op && run->args && k < op->nargs; k++) {
        if (op->argtypes[k] != NT_ARG_TENSOR || run->args[k].t != t)
            continue;
        char name[64] = "";
        const nop_library *lib = run->lib;
        if (lib && nop_library_op_argname(lib, (int)(op - lib->desc->ops), k, name + 2,
                                          sizeof name - 4)) {
            memcpy(name, " '", 2);
            strcat(name, "'");
        }
        snprintf(buf, size, ", or give the op's argument %d%s as %s %s tensor", k + 1,
                 name[0] ? name : "", nopi_dtype_article(want), nopi_dtype_name(want));
        break;
    }
    return buf;
}

/* Checks an element access and returns its flat index.  fn NULL: a C++ element reference,
 * named in messages by its tensor's dtype (looked up only when a rule is broken). */
static int64_t element(nopi_core *c, const nt_accessor *a, int want, int nidx,
                       const int64_t *idx, const char *fn)
{
    if (!a)
        nopi_core_fail(c, "%s: the accessor is NULL", fn ? fn : "accessor<T, N>()[...]");
    const nt_tensor *t = a->t_;
    nopi_check_data(c, t, fn ? fn : "accessor<T, N>()[...]");
    if (!fn && (nidx != t->ndim || t->dtype > NT_U8))
        fn = get_name[t->dtype <= NT_U8 ? t->dtype : NT_F32];
    char hint[160];
    if (want >= 0 && t->dtype != (nt_dtype)want)
        nopi_core_fail(c, "%s on %s %s tensor: use nt_%s_%s%s", fn, nopi_dtype_article(t->dtype),
                       nopi_dtype_name(t->dtype), strncmp(fn, "nt_get", 6) == 0 ? "get" : "set",
                       nopi_dtype_suffix(t->dtype),
                       nopi_input_hint(c, t, (nt_dtype)want, hint, sizeof hint));
    if (nidx != t->ndim && t->ndim == 0)   /* C's variadic macro cannot pass no index */
        nopi_core_fail(c, "%s on a 0-dimensional tensor, which the standard accessor cannot "
                       "index: read or write its one element with a stream (nt_stream_read_*, "
                       "nt_stream_write_*) or the tensor library (nt_fill_)", fn);
    if (nidx != t->ndim)
        nopi_core_fail(c, "%s with %d ind%s on a %d-dimensional tensor: give one index per "
                       "dimension", fn, nidx, nidx == 1 ? "ex" : "ices", t->ndim);
    int64_t flat = 0;
    for (int d = 0; d < nidx; d++) {
        if (idx[d] < 0 || idx[d] >= t->sizes[d]) {
            if (!fn)
                fn = get_name[t->dtype];
            char shape[96];
            nopi_shape_str(t, shape, sizeof shape);
            nopi_core_fail(c, "%s: index %lld of dimension %d is out of range for %s %s tensor",
                           fn, (long long)idx[d], d, nopi_number_article(shape), shape);
        }
        flat = flat * t->sizes[d] + idx[d];
    }
    c->n.std_elems++;
    return flat;
}

/* Where element idx of the accessor's tensor lives, after every check of a read (or of a
 * write) of one element of size bytes, and with the read or write noted for the output
 * rules when the tensor is the op's output. */
static unsigned char *element_to_read(nopi_core *c, const nt_accessor *a, nt_dtype want,
                                      int nidx, const int64_t *idx, const char *fn, size_t size)
{
    int64_t i = element(c, a, want, nidx, idx, fn);
    if (a->t_ == c->run->dst)
        nopi_out_read(c, i, i + 1, fn);
    return a->t_->data + (size_t)i * size;
}

static unsigned char *element_to_write(nopi_core *c, const nt_accessor *a, nt_dtype want,
                                       int nidx, const int64_t *idx, const char *fn,
                                       size_t size)
{
    int64_t i = element(c, a, want, nidx, idx, fn);
    nopi_check_writable(c, a->t_, fn);
    if (a->t_ == c->run->dst)
        nopi_out_write(c, i, i + 1);
    return a->t_->data + (size_t)i * size;
}

/* The accessors of each dtype; 16-bit floats are read and written as float. */
#define GET_SET(sfx, ctype, dt) \
    ctype nopi_api_get_##sfx(const nt_accessor *a, int nidx, const int64_t *idx) \
    { \
        NOPI_API(c, NOP_COST_STD); \
        ctype v; \
        memcpy(&v, element_to_read(c, a, dt, nidx, idx, "nt_get_" #sfx, sizeof v), sizeof v); \
        return v; \
    } \
    void nopi_api_set_##sfx(const nt_accessor *a, ctype v, int nidx, const int64_t *idx) \
    { \
        NOPI_API(c, NOP_COST_STD); \
        memcpy(element_to_write(c, a, dt, nidx, idx, "nt_set_" #sfx, sizeof v), &v, sizeof v); \
    }
#define GET_SET_16(sfx, dt, conv_in, conv_out) \
    float nopi_api_get_##sfx(const nt_accessor *a, int nidx, const int64_t *idx) \
    { \
        NOPI_API(c, NOP_COST_STD); \
        uint16_t v; \
        memcpy(&v, element_to_read(c, a, dt, nidx, idx, "nt_get_" #sfx, 2), 2); \
        return conv_out(v); \
    } \
    void nopi_api_set_##sfx(const nt_accessor *a, float v, int nidx, const int64_t *idx) \
    { \
        NOPI_API(c, NOP_COST_STD); \
        uint16_t h = conv_in(v); \
        memcpy(element_to_write(c, a, dt, nidx, idx, "nt_set_" #sfx, 2), &h, 2); \
    }
GET_SET(f32, float, NT_F32)
GET_SET_16(bf16, NT_BF16, nopi_f32_to_bf16, nopi_bf16_to_f32)
GET_SET_16(f16, NT_F16, nopi_f32_to_f16, nopi_f16_to_f32)
GET_SET(i32, int32_t, NT_I32)
GET_SET(i8, int8_t, NT_I8)
GET_SET(i64, int64_t, NT_I64)
GET_SET(i16, int16_t, NT_I16)
GET_SET(u8, uint8_t, NT_U8)

/* ---- C++ element references ------------------------------------------------------------
 * torch's a[i][j] is a T & into the tensor (const T & on a read-only accessor), so the
 * runtime sees the access when the reference is made, not whether it is read or written.
 * Everything an nt_get/nt_set checks that does not depend on that is checked here, on each
 * reference, and counted as one standard-accessor element for the cost model.  References
 * through a writable accessor are remembered with the element's bytes (the last
 * NOPI_CXX_INPUT_REFS into inputs, the last one into anything else) and looked at again at
 * the next reference and at the kernel's end:
 * - into an input, a change is the write to an input it is (reported, the input restored);
 * - into the output, a value made from the never-written pattern (outtrack.c) is a read of
 *   an element no core wrote, as nt_get's initcheck would report it;
 * - a change to an element that held a value (not zero, not its pattern) is a read and a
 *   write, as C's nt_get and nt_set of out[i] += x: one more element for the cost model,
 *   unless the reference follows one to the same element that wrote nothing (the write half
 *   of out[i] = f(out[i]), whose read was that one).
 * neuronop-cxx(3), "Element references", says what this sees and what it cannot. */

/* The input a remembered reference into one wrote (and restored), or NULL. */
static const nt_tensor *input_written(nopi_core *c)
{
    int n = c->ncxx_in < NOPI_CXX_INPUT_REFS ? c->ncxx_in : NOPI_CXX_INPUT_REFS;
    for (int k = 0; k < n; k++) {
        const nt_tensor *t = c->cxx_in[k].t;
        if (memcmp(c->cxx_in[k].p, c->cxx_in[k].old, t->itemsize) != 0) {
            memcpy(c->cxx_in[k].p, c->cxx_in[k].old, t->itemsize);
            c->ncxx_in = 0;
            return t;
        }
    }
    return NULL;
}

/* Remembers a reference into an input through a writable accessor (one already remembered
 * stays where it is). */
static void remember_input(nopi_core *c, const nt_tensor *t, unsigned char *p)
{
    int n = c->ncxx_in < NOPI_CXX_INPUT_REFS ? c->ncxx_in : NOPI_CXX_INPUT_REFS;
    for (int k = 0; k < n; k++)
        if (c->cxx_in[k].p == p)
            return;
    int at = c->ncxx_in++ % NOPI_CXX_INPUT_REFS;
    c->cxx_in[at].p = p;
    c->cxx_in[at].t = t;
    memcpy(c->cxx_in[at].old, p, t->itemsize);
}

/* The n bytes of an element as a number, without a call per access. */
static inline uint64_t elem_bits(const unsigned char *p, size_t n)
{
    uint8_t b1;
    uint16_t b2;
    uint32_t b4;
    uint64_t b8;
    switch (n) {
    case 1: memcpy(&b1, p, 1); return b1;
    case 2: memcpy(&b2, p, 2); return b2;
    case 4: memcpy(&b4, p, 4); return b4;
    default: memcpy(&b8, p, 8); return b8;
    }
}

/* The never-written output element the remembered reference's element was made from, or
 * -1; looked at only when its bytes changed since it was last looked at. */
static inline int64_t output_read(nopi_core *c)
{
    if (!c->out_pattern || !c->cxx_ref.p || c->cxx_ref.t != c->run->dst)
        return -1;
    uint64_t bits = elem_bits(c->cxx_ref.p, 4);
    if (bits == c->cxx_ref.seen)
        return -1;
    c->cxx_ref.seen = bits;
    int64_t k = nopi_out_pattern_source(c, c->cxx_ref.i);
    return k >= 0 ? k : -1;
}

/* Ends the remembered reference: the read of a read and a write is counted. */
static inline void retire(nopi_core *c)
{
    if (c->cxx_ref.p && !c->cxx_ref.fresh && !c->cxx_ref.paired &&
        elem_bits(c->cxx_ref.p, c->cxx_ref.t->itemsize) != c->cxx_ref.old)
        c->n.std_elems++;
    c->cxx_ref.p = NULL;
}

/* Looks at the remembered references again (a C++ element reference is being made). */
static void look_again(nopi_core *c)
{
    const nt_tensor *in = c->ncxx_in ? input_written(c) : NULL;
    if (in)
        nopi_check_writable(c, in, set_name[in->dtype]);
    int64_t k = output_read(c);
    if (k >= 0)
        nopi_core_fail(c, NOPI_OUT_UNINIT_FMT, get_name[NT_F32], (long long)k, 1LL);
}

/* Remembers a reference to element i (at p) of t through a writable accessor, t not an
 * input, and the last one's end. */
static void remember(nopi_core *c, const nt_tensor *t, int64_t i, unsigned char *p)
{
    size_t n = t->itemsize;
    uint64_t bits = elem_bits(p, n);
    bool paired = c->cxx_ref.p == p && bits == c->cxx_ref.old;
    retire(c);
    bool fresh = bits == 0;
    if (t == c->run->dst) {
        if (!c->out_pattern) {
            nopi_out_pattern(c);
            bits = elem_bits(p, n);
        }
        fresh = fresh || (c->out_pattern && bits == nopi_out_pattern_bits(i));
        nopi_out_write(c, i, i + 1);
    }
    c->cxx_ref.p = p;
    c->cxx_ref.t = t;
    c->cxx_ref.i = i;
    c->cxx_ref.old = c->cxx_ref.seen = bits;
    c->cxx_ref.fresh = fresh;
    c->cxx_ref.paired = paired;
}

void *nopi_api_cxx_ref(const nt_accessor *a, int nidx, const int64_t *idx, int writable)
{
    NOPI_API(c, NOP_COST_STD);
    if (c->ncxx_in || c->out_pattern)
        look_again(c);
    int64_t i = element(c, a, -1, nidx, idx, NULL);
    const nt_tensor *t = a->t_;
    unsigned char *p = t->data + (size_t)i * t->itemsize;
    if (!writable) {
        if (t == c->run->dst)
            nopi_out_read(c, i, i + 1, get_name[t->dtype]);
    } else if (!t->readonly) {
        remember(c, t, i, p);
    } else if (c->run->checks & NOP_CHECK_READONLY) {
        remember_input(c, t, p);   /* an input, through a non-const copy's accessor */
    }
    return p;
}

/* ---- streaming accessors ---------------------------------------------------------------- */

static nt_stream open_stream(const nt_tensor *t, bool write)
{
    NOPI_API(c, NOP_COST_STREAM);
    const char *fn = write ? "nt_write_stream_of" : "nt_read_stream_of";
    if (write)
        nopi_check_writable(c, t, fn);
    else
        nopi_check_data(c, t, fn);
    nopi_single_core_only(c, fn, "a streaming accessor");
    nopi_track *tr = track(c, t);
    if (tr->std_uses)
        incoherent(c, t, fn, "a stream on a tensor also used through a standard accessor");
    else if (write && (tr->read_streams || tr->write_streams))
        incoherent(c, t, fn, "a write stream on a tensor with another stream open");
    else if (!write && tr->write_streams)
        incoherent(c, t, fn, "a read stream on a tensor with a write stream open");
    if (c->nstreams == NOPI_MAX_STREAMS)
        nopi_core_fail(c, "%s: more than %d streams opened in one kernel", fn, NOPI_MAX_STREAMS);
    int id = c->nstreams++;
    nopi_stream *s = &c->streams[id];
    *s = (nopi_stream){ t, 0, write, true, -1, { 0, 0, 0 } };
    /* The first fast_streams open streams each hold 4 KB of TCM and run fast; a stream that
     * gets none (more are open, or the pool is full) runs at standard-accessor speed. */
    size_t need = (size_t)c->run->profile->stream_tcm_bytes;
    if (c->open_streams < c->run->profile->fast_streams &&
        nopi_tcm_alloc(c, need ? need : 1, id, NULL))
        for (int b = 0; b < c->nblocks; b++)
            if (c->blocks[b].stream == id)
                s->block = b;
    if (write)
        tr->write_streams++;
    else
        tr->read_streams++;
    c->open_streams++;
    c->n.streams_opened++;
    if (c->run->traced)
        s->opened = nopi_trace_at(c, nopi_now());
    if (s->block < 0 && !c->warned_streams && (c->run->checks & NOP_CHECK_STREAMS)) {
        c->warned_streams = true;
        if (c->open_streams > c->run->profile->fast_streams)
            nopi_core_warn(c, "%s: %d streams open at once; only %d are fast, the others run "
                           "at standard-accessor speed", fn, c->open_streams,
                           c->run->profile->fast_streams);
        else
            nopi_core_warn(c, "%s: no room in TCM for the stream's %zu bytes (%lld of %lld in "
                           "use): it runs at standard-accessor speed", fn, need,
                           (long long)c->tcm_used, (long long)c->run->profile->tcm_bytes);
    }
    nt_stream r = { t, id };
    return r;
}

nt_read_stream nopi_api_read_stream_of(const nt_tensor *t) { return open_stream(t, false); }
nt_write_stream nopi_api_write_stream_of(const nt_tensor *t) { return open_stream(t, true); }

static nopi_stream *stream_of(nopi_core *c, const nt_stream *s, const char *fn)
{
    if (!s)
        nopi_core_fail(c, "%s: the stream is NULL", fn);
    if (s->id_ < 0 || s->id_ >= c->nstreams || c->streams[s->id_].t != s->t_)
        nopi_core_fail(c, "%s: not a stream this core opened", fn);
    nopi_stream *st = &c->streams[s->id_];
    if (!st->open)
        nopi_core_fail(c, "%s: the stream was already closed", fn);
    return st;
}

void nopi_api_stream_close(nt_stream *s)
{
    NOPI_API(c, NOP_COST_STREAM);
    nopi_stream *st = stream_of(c, s, "nt_stream_close");
    st->open = false;
    if (c->run->traced)
        nopi_trace_span_end(c, NOPI_SPAN_STREAM, (int)s->id_, st->opened, nopi_now());
    c->open_streams--;
    nopi_track *tr = track(c, st->t);
    if (st->write)
        tr->write_streams--;
    else
        tr->read_streams--;
    for (int b = 0; b < c->nblocks; b++)
        if (c->blocks[b].stream == (int)s->id_) {
            nopi_tcm_release(c, b);
            break;
        }
}

/* Checks one sequential access; returns the element index. */
static int64_t step(nopi_core *c, nt_stream *s, bool write, nt_dtype want, const char *fn)
{
    nopi_stream *st = stream_of(c, s, fn);
    if (st->write != write)
        nopi_core_fail(c, "%s on a %s stream", fn, st->write ? "write" : "read");
    char hint[160];
    if (st->t->dtype != want)
        nopi_core_fail(c, "%s on %s %s tensor: use nt_stream_%s_%s%s", fn,
                       nopi_dtype_article(st->t->dtype), nopi_dtype_name(st->t->dtype),
                       write ? "write" : "read", nopi_dtype_suffix(st->t->dtype),
                       nopi_input_hint(c, st->t, want, hint, sizeof hint));
    if (st->pos >= st->t->numel) {
        char count[24];
        snprintf(count, sizeof count, "%lld", (long long)st->t->numel);
        nopi_core_fail(c, "%s: %s past the end of %s %s-element tensor", fn,
                       write ? "writes" : "reads", nopi_number_article(count), count);
    }
    if (st->t == c->run->dst) {
        if (write)
            nopi_out_write(c, st->pos, st->pos + 1);
        else
            nopi_out_read(c, st->pos, st->pos + 1, fn);
    }
    if (st->block < 0)
        c->n.stream_slow_elems++;
    else
        c->n.stream_elems++;
    return st->pos++;
}

/* get/set: nopi_get_f/nopi_set_f for floats, nopi_get_i/nopi_set_i for integers (exact for
 * int64), with the element type they go through. */
#define STREAM_RW(sfx, ctype, dt, get, set, via) \
    ctype nopi_api_stream_read_##sfx(nt_read_stream *s) \
    { \
        NOPI_API(c, NOP_COST_STREAM); \
        int64_t i = step(c, s, false, dt, "nt_stream_read_" #sfx); \
        return (ctype)get(s->t_, i); \
    } \
    void nopi_api_stream_write_##sfx(nt_write_stream *s, ctype v) \
    { \
        NOPI_API(c, NOP_COST_STREAM); \
        int64_t i = step(c, s, true, dt, "nt_stream_write_" #sfx); \
        set((nt_tensor *)s->t_, i, (via)v); \
    }
/* A 16-bit element read as a float without a trip through double, which would quiet a
 * signalling NaN: the float holds the element's bits, as nt_get_bf16's does, so the C++
 * layer gives the element back exactly... */
static float get_bf16(const nt_tensor *t, int64_t i)
{
    uint16_t v;
    memcpy(&v, t->data + (size_t)i * 2, 2);
    return nopi_bf16_to_f32(v);
}
static float get_f16(const nt_tensor *t, int64_t i)
{
    uint16_t v;
    memcpy(&v, t->data + (size_t)i * 2, 2);
    return nopi_f16_to_f32(v);
}
/* ... and written from a float that holds a 16-bit value exactly (a NaN's sign, payload and
 * signalling bit too, as the C++ layer passes an element) as that value; any other float is
 * rounded as nt_set_bf16 and nt_set_f16 round it. */
static void set_bf16(nt_tensor *t, int64_t i, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint16_t h = (u & 0xffffu) == 0 ? (uint16_t)(u >> 16) : nopi_f32_to_bf16(v);
    memcpy(t->data + (size_t)i * 2, &h, 2);
}
static void set_f16(nt_tensor *t, int64_t i, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint16_t h = nopi_f32_to_f16(v);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fe000u) && !(u & 0x1fffu))
        h = (uint16_t)((u >> 16 & 0x8000u) | 0x7c00u | (u >> 13 & 0x3ffu));
    memcpy(t->data + (size_t)i * 2, &h, 2);
}
/* A float32 element as it is: through double, a signalling NaN came back quiet (a C++
 * idioms tester's find), where neuronop-api(3) promises the element exactly. */
static float get_f32(const nt_tensor *t, int64_t i)
{
    float v;
    memcpy(&v, t->data + (size_t)i * 4, 4);
    return v;
}
static void set_f32(nt_tensor *t, int64_t i, float v)
{
    memcpy(t->data + (size_t)i * 4, &v, 4);
}
STREAM_RW(f32, float, NT_F32, get_f32, set_f32, float)
STREAM_RW(bf16, float, NT_BF16, get_bf16, set_bf16, float)
STREAM_RW(f16, float, NT_F16, get_f16, set_f16, float)
STREAM_RW(i32, int32_t, NT_I32, nopi_get_i, nopi_set_i, int64_t)
STREAM_RW(i8, int8_t, NT_I8, nopi_get_i, nopi_set_i, int64_t)
STREAM_RW(i64, int64_t, NT_I64, nopi_get_i, nopi_set_i, int64_t)
STREAM_RW(i16, int16_t, NT_I16, nopi_get_i, nopi_set_i, int64_t)
STREAM_RW(u8, uint8_t, NT_U8, nopi_get_i, nopi_set_i, int64_t)

void nopi_streams_check_closed(nopi_core *c)
{
    /* a C++ element reference written after the last runtime call: into an input, or into
     * the output with a value read from a never-written element; then the whole output */
    int64_t k = output_read(c);
    const nt_tensor *t = input_written(c);
    if (t) {
        c->end = NOPI_END_ERROR;
        c->diag.severity = NOP_SEV_ERROR;
        snprintf(c->diag.msg, sizeof c->diag.msg, "%s: writes to an input tensor; inputs are "
                 "read-only (write the output from get_dst_tensor, or a tensor the kernel made)",
                 set_name[t->dtype]);
        return;
    }
    retire(c);
    if (k >= 0) {
        c->end = NOPI_END_ERROR;
        c->diag.severity = NOP_SEV_ERROR;
        snprintf(c->diag.msg, sizeof c->diag.msg, NOPI_OUT_UNINIT_FMT, get_name[NT_F32],
                 (long long)k, 1LL);
        return;
    }
    if (nopi_out_pattern_end(c, c->diag.msg, sizeof c->diag.msg) != 0) {
        c->end = NOPI_END_ERROR;
        c->diag.severity = NOP_SEV_ERROR;
        return;
    }
    for (int i = 0; i < c->nstreams; i++) {
        nopi_stream *st = &c->streams[i];
        if (st->open && st->write) {
            c->end = NOPI_END_ERROR;
            c->diag.severity = NOP_SEV_ERROR;
            snprintf(c->diag.msg, sizeof c->diag.msg, "a write stream was never closed: on "
                     "the device its last writes are never flushed (call nt_stream_close)");
            return;
        }
    }
}

/* ---- TCM accessors ---------------------------------------------------------------------- */

nt_tcm_accessor nopi_api_tcm_accessor_of(const nt_tensor *t)
{
    NOPI_API(c, NOP_COST_TCM);
    nopi_check_data(c, t, "nt_tcm_accessor_of");
    nt_tcm_accessor a = { t, 0 };
    return a;
}

/* Checks a copy and returns the byte count. */
static size_t copy_check(nopi_core *c, const nt_tcm_accessor *acc, const void *buf,
                         int64_t offset, int64_t n, const char *fn)
{
    if (!acc)
        nopi_core_fail(c, "%s: the accessor is NULL", fn);
    const nt_tensor *t = acc->t_;
    nopi_check_data(c, t, fn);
    if (n < 0 || offset < 0)
        nopi_core_fail(c, "%s(offset=%lld, n=%lld): offset and count must be at least 0", fn,
                       (long long)offset, (long long)n);
    /* a copy of no elements copies nothing, wherever it is (the last core's share of a
     * ceiling-divided split: a tester's find) */
    if (n > 0 && (offset >= t->numel || n > t->numel - offset)) {
        /* the elements outside, apart from those the copy has in range: an off-by-one in
         * the count reads "element 1023", not "elements 0..1023" (a new user's find) */
        long long first = offset > t->numel ? (long long)offset : (long long)t->numel;
        unsigned long long last = (unsigned long long)offset + (unsigned long long)n - 1;
        if ((unsigned long long)first == last)
            nopi_core_fail(c, "%s(offset=%lld, n=%lld): element %lld is outside the tensor, "
                           "which has %lld", fn, (long long)offset, (long long)n, first,
                           (long long)t->numel);
        nopi_core_fail(c, "%s(offset=%lld, n=%lld): elements %lld..%llu are outside the "
                       "tensor, which has %lld", fn, (long long)offset, (long long)n, first,
                       last,   /* the last may be past INT64_MAX */
                       (long long)t->numel);
    }
    /* the device flushes a write stream at its close: a copy before sees the tensor as it
     * was, which neuronop's streams, writing through, do not show (a tester's find) */
    if (n > 0 && t->track && t->track->write_streams)
        incoherent(c, t, fn, "a TCM copy of a tensor with a write stream open");
    size_t bytes = (size_t)n * t->itemsize;
    if (n > 0 && nopi_tcm_find(c, buf, bytes) < 0) {
        int b = nopi_tcm_find(c, buf, 1);
        if (b >= 0)
            nopi_core_fail(c, "%s(offset=%lld, n=%lld): %zu bytes do not fit in the TCM buffer "
                           "at %p (%u bytes from tcm_malloc, %zu of them after this pointer)",
                           fn, (long long)offset, (long long)n, bytes, buf, c->blocks[b].req,
                           (size_t)(c->blocks[b].offset + c->blocks[b].req) -
                               (size_t)((const unsigned char *)buf - c->tcm));
        nopi_core_fail(c, "%s(offset=%lld, n=%lld): the buffer %p is not TCM from tcm_malloc "
                       "on this core (or was freed)", fn, (long long)offset, (long long)n, buf);
    }
    c->n.tcm_bytes += (int64_t)bytes;
    c->n.tcm_transfers++;
    return bytes;
}

void nopi_api_tensor_to_tcm(nt_tcm_accessor *acc, void *buf, int64_t offset, int64_t n)
{
    NOPI_API(c, NOP_COST_TCM);
    size_t bytes = copy_check(c, acc, buf, offset, n, "nt_tensor_to_tcm");
    if (acc->t_ == c->run->dst)
        nopi_out_read(c, offset, offset + n, "nt_tensor_to_tcm");
    if (bytes)
        memcpy(buf, acc->t_->data + (size_t)offset * acc->t_->itemsize, bytes);
}

void nopi_api_tcm_to_tensor(nt_tcm_accessor *acc, const void *buf, int64_t offset, int64_t n)
{
    NOPI_API(c, NOP_COST_TCM);
    size_t bytes = copy_check(c, acc, buf, offset, n, "nt_tcm_to_tensor");
    nopi_check_writable(c, acc->t_, "nt_tcm_to_tensor");
    if (acc->t_ == c->run->dst)
        nopi_out_write(c, offset, offset + n);
    if (bytes)
        memcpy(acc->t_->data + (size_t)offset * acc->t_->itemsize, buf, bytes);
}
