/*
 * tensor_host.c - host-side tensor services for the CLI and tests: generators, summaries,
 * comparison with tolerances, and the public accessors of nop_tensor.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

_Static_assert((int)NOP_BF16 == (int)NT_BF16 && (int)NOP_U8 == (int)NT_U8,
               "nop_dtype and nt_dtype must agree");

void nop_tensor_free(nop_tensor *t) { nopi_tensor_free(t); }
enum nop_dtype nop_tensor_dtype(const nop_tensor *t) { return (enum nop_dtype)t->dtype; }
int nop_tensor_ndim(const nop_tensor *t) { return t->ndim; }
const int64_t *nop_tensor_sizes(const nop_tensor *t) { return t->sizes; }
int64_t nop_tensor_numel(const nop_tensor *t) { return t->numel; }
double nop_tensor_get(const nop_tensor *t, int64_t i) { return nopi_get_f(t, i); }
int64_t nop_tensor_get_int(const nop_tensor *t, int64_t i) { return nopi_get_i(t, i); }
const char *nop_dtype_name(enum nop_dtype d) { return nopi_dtype_name((nt_dtype)d); }
void nop_tensor_shape_str(const nop_tensor *t, char *buf, size_t size)
{
    nopi_shape_str(t, buf, size);
}

static const char *const kinds[] = { "randn", "rand", "zeros", "ones", "full", "arange" };

const char *nopi_generator_like(const char *spec)
{
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : 0;
    char kind[16];
    if (n == 0 || n >= sizeof kind)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isalpha((unsigned char)spec[i]))
            return NULL;
    memcpy(kind, spec, n);
    kind[n] = '\0';
    return nop_closest(kind, kinds, NOPI_ARRAY_LEN(kinds));
}

bool nopi_number_like(const char *spec)
{
    char *end;
    (void)strtod(spec, &end);
    return *spec && !*end;
}

bool nop_is_generator(const char *spec)
{
    const char *colon = strchr(spec, ':');
    if (!colon)
        return false;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(kinds); i++)
        if (strlen(kinds[i]) == (size_t)(colon - spec) && strncmp(spec, kinds[i], (size_t)(colon - spec)) == 0)
            return true;
    return false;
}

static int parse_shape(const char *s, int *ndim, int64_t *sizes)
{
    *ndim = 0;
    if (strcmp(s, "scalar") == 0)
        return 0;
    while (*s) {
        if (!isdigit((unsigned char)*s) || *ndim > 64)
            return -1;
        char *end;
        errno = 0;
        long long n = strtoll(s, &end, 10);
        if (errno)
            return -1;
        /* past the device's limit only counted: nopi_shape_ok names the limit */
        if (*ndim < NOPI_MAX_DIMS)
            sizes[*ndim] = n;
        (*ndim)++;
        s = end;
        if (*s == 'x' && isdigit((unsigned char)s[1]))   /* "4x" is no shape */
            s++;
        else if (*s)
            return -1;
    }
    return *ndim ? 0 : -1;
}

static int gen_error(nop_error *err, const char *spec, const char *what)
{
    nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "bad tensor generator '%s': %s", spec, what);
    nopi_detail(err, "write KIND:SHAPE[:DTYPE] (KIND randn, rand, zeros or ones), "
                "full:SHAPE:VALUE[:DTYPE] or arange:N[:DTYPE]; SHAPE like 32x4096");
    return -1;
}

static bool is_floating(nt_dtype d)
{
    return d == NT_F32 || d == NT_BF16 || d == NT_F16;
}

bool nopi_number_read(const char *text, nopi_number *num)
{
    char *end;
    errno = 0;
    num->n = strtoll(text, &end, 10);
    num->whole = end != text && !*end;
    num->past_int64 = num->whole && errno == ERANGE;
    num->v = strtod(text, &end);
    return end != text && !*end;
}

/* Whether torch.full refuses f for dtype: c10's overflows<To, From>, which a Python int
 * meets as an integer and a Python float as a double.  An integer may not lie outside
 * int64, nor the type's range (into an unsigned type a negative one wraps, down to -max); a
 * double may not either, unless it is an infinity or NaN and the type a floating one (an
 * integer type takes no NaN nor infinity). */
static bool full_overflows(const nopi_number *f, nt_dtype dtype)
{
    static const double lo[] = { [NT_F32] = -FLT_MAX, [NT_BF16] = -3.3895313892515355e38,
                                 [NT_F16] = -65504, [NT_I32] = INT32_MIN, [NT_I8] = INT8_MIN,
                                 [NT_I64] = (double)INT64_MIN, [NT_I16] = INT16_MIN,
                                 [NT_U8] = 0 };
    static const double hi[] = { [NT_F32] = FLT_MAX, [NT_BF16] = 3.3895313892515355e38,
                                 [NT_F16] = 65504, [NT_I32] = INT32_MAX, [NT_I8] = INT8_MAX,
                                 [NT_I64] = (double)INT64_MAX, [NT_I16] = INT16_MAX,
                                 [NT_U8] = UINT8_MAX };
    if (f->whole) {
        if (f->past_int64)
            return true;   /* torch cannot even unpack it */
        if (dtype == NT_U8)
            return f->n > UINT8_MAX || f->n < -(long long)UINT8_MAX;
        return dtype != NT_I64 && ((double)f->n < lo[dtype] || (double)f->n > hi[dtype]);
    }
    if (isinf(f->v) || isnan(f->v))
        return !is_floating(dtype);
    return f->v < lo[dtype] || f->v > hi[dtype];
}

/* A generator spec as read: what nop_tensor_generate makes. */
typedef struct gen_spec {
    char buf[256];        /* the spec, cut at its colons */
    const char *kind;
    bool full, arange;
    int dtype, ndim;
    int64_t sizes[NOPI_MAX_DIMS];
    nopi_number value;    /* full's, as torch.full meets it: a Python int or float */
} gen_spec;

/* Reads spec into g; 0, or -1 with err filled (what is wrong with it, and its form). */
static int read_spec(const char *spec, gen_spec *g, nop_error *err)
{
    memset(g, 0, sizeof *g);
    if (strlen(spec) >= sizeof g->buf)
        return gen_error(err, spec, "too long");
    strcpy(g->buf, spec);
    char *parts[4] = { NULL };
    int nparts = 0;
    for (char *p = g->buf; nparts < 4; nparts++) {
        parts[nparts] = p;
        char *colon = strchr(p, ':');
        if (!colon) {
            nparts++;
            break;
        }
        *colon = '\0';
        p = colon + 1;
    }
    const char *kind = g->kind = parts[0];
    bool known = false;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(kinds) && !known; i++)
        known = strcmp(kind, kinds[i]) == 0;
    if (!known) {
        char what[128];
        snprintf(what, sizeof what, "unknown kind '%s'", kind);
        return gen_error(err, spec, what);
    }
    bool full = g->full = strcmp(kind, "full") == 0;
    bool arange = g->arange = strcmp(kind, "arange") == 0;
    int want = full ? 3 : 2;
    if (nparts < want || nparts > want + 1)
        return gen_error(err, spec, full ? "full needs a shape and a value"
                                         : "expected KIND:SHAPE with an optional :DTYPE");
    int dtype = g->dtype = NT_F32;
    if (nparts == want + 1 && (dtype = g->dtype = nopi_dtype_parse(parts[want])) < 0) {
        char names[160], what[256];
        nopi_dtype_names(names, sizeof names);
        snprintf(what, sizeof what, "unknown dtype '%s'; the device's are %s", parts[want],
                 names);
        return gen_error(err, spec, what);
    }
    bool random = strcmp(kind, "randn") == 0 || strcmp(kind, "rand") == 0;
    if (random && !is_floating((nt_dtype)dtype)) {   /* it would truncate to 0, 1 and -1 */
        char what[192];
        snprintf(what, sizeof what, "%s makes floating-point numbers, not %s (torch.%s "
                 "refuses it too); give a float dtype, or make integers with arange or full",
                 kind, nopi_dtype_name((nt_dtype)dtype), kind);
        return gen_error(err, spec, what);
    }
    if (parse_shape(parts[1], &g->ndim, g->sizes) != 0 || (arange && g->ndim != 1))
        return gen_error(err, spec, arange ? "arange takes a count: arange:N"
                                           : "a shape is sizes joined by x, like 32x4096");
    char why[256];
    if (!nopi_shape_ok(g->ndim, g->sizes, why, sizeof why)) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "tensor '%s' is over the device's limits: "
                  "%s", spec, why);
        return -1;
    }
    if (full) {
        if (!nopi_number_read(parts[2], &g->value))
            return gen_error(err, spec, "the value of full is not a number");
        if (full_overflows(&g->value, (nt_dtype)dtype)) {
            char what[160];
            snprintf(what, sizeof what, "%s cannot be %s without overflow (torch.full "
                     "refuses it too)", parts[2], nopi_dtype_name((nt_dtype)dtype));
            return gen_error(err, spec, what);
        }
    }
    return 0;
}

int nopi_generator_check(const char *spec, nop_error *err)
{
    gen_spec g;
    return read_spec(spec, &g, err);
}

int nop_tensor_generate(nop_tensor **out, const char *spec, uint64_t seed, nop_error *err)
{
    *out = NULL;
    gen_spec g;
    if (read_spec(spec, &g, err) != 0)
        return -1;
    const char *kind = g.kind;
    bool full = g.full, arange = g.arange;
    int dtype = g.dtype, ndim = g.ndim;
    const int64_t *sizes = g.sizes;
    const nopi_number value = g.value;
    nt_tensor *t = nopi_tensor_alloc((nt_dtype)dtype, ndim, sizes, false);
    if (!t) {
        /* the shape passed the device's limits, so its element count is finite: say how
         * much memory that is, in the unit a user would check */
        double bytes = (double)nopi_dtype_size((nt_dtype)dtype);
        for (int i = 0; i < ndim; i++)
            bytes *= (double)sizes[i];
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "tensor '%s' is too large: %.1f GB, more "
                  "than this machine can give it", spec, bytes / 1e9);
        nopi_detail(err, "give a smaller shape");
        return -1;
    }
    /* erand48 keeps its state here, not in libc: two generators never share a stream.  The
     * seed is mixed first (splitmix64), so small seeds give unrelated, non-zero states. */
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    unsigned short state[3] = { (unsigned short)z, (unsigned short)(z >> 16),
                                (unsigned short)(z >> 32) };
    for (int64_t i = 0; i < t->numel; i++) {
        double v;
        if (strcmp(kind, "randn") == 0) {   /* Box-Muller */
            double u1 = erand48(state), u2 = erand48(state);
            v = sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
        } else if (strcmp(kind, "rand") == 0) {
            v = erand48(state);
        } else if (strcmp(kind, "ones") == 0) {
            v = 1;
        } else if (full && value.whole && !is_floating(t->dtype)) {
            nopi_set_i(t, i, value.n);   /* every digit, as torch.full keeps them */
            continue;
        } else if (full) {
            v = value.v;
        } else if (arange) {
            v = (double)i;
        } else {   /* zeros: read_spec knows no other kind */
            v = 0;
        }
        nopi_set_f(t, i, v);
    }
    *out = t;
    return 0;
}

void nop_tensor_stats_of(const nop_tensor *t, nop_tensor_stats *st)
{
    memset(st, 0, sizeof *st);
    double sum = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = nopi_get_f(t, i);
        if (!isfinite(v)) {
            st->nonfinite++;
            continue;
        }
        if (n == 0 || v < st->min)
            st->min = v;
        if (n == 0 || v > st->max)
            st->max = v;
        sum += v;
        n++;
    }
    if (n == 0)   /* nothing to sum up: not 0, which would claim a value */
        st->min = st->max = st->mean = NAN;
    else
        st->mean = sum / (double)n;
}

/* v rounded to dtype d, as a tensor of d would hold it (an infinity past its range); v as
 * it is for an integer dtype. */
static double in_dtype(double v, nt_dtype d)
{
    switch (d) {
    case NT_F32: return (float)v;
    case NT_BF16: return nopi_bf16_to_f32(nopi_f32_to_bf16((float)v));
    case NT_F16: return nopi_f16_to_f32(nopi_f32_to_f16((float)v));
    default: return v;
    }
}

void nop_tensor_compare(const nop_tensor *got, const nop_tensor *want, double rtol, double atol,
                        nop_compare *res)
{
    memset(res, 0, sizeof *res);
    if (!nopi_same_shape(got, want)) {
        char a[96], b[96];
        nopi_shape_str(got, a, sizeof a);
        nopi_shape_str(want, b, sizeof b);
        snprintf(res->why, sizeof res->why, "shape %s differs from the expected %s", a, b);
        res->mismatches = got->numel > want->numel ? got->numel : want->numel;
        if (res->mismatches == 0)
            res->mismatches = 1;   /* two empty tensors of other shapes differ all the same */
        return;
    }
    if (got->dtype != want->dtype)
        snprintf(res->why, sizeof res->why, "dtype %s differs from the expected %s",
                 nopi_dtype_name(got->dtype), nopi_dtype_name(want->dtype));
    bool integers = !is_floating(got->dtype) && !is_floating(want->dtype);
    for (int64_t i = 0; i < got->numel; i++) {
        double g = nopi_get_f(got, i), w = nopi_get_f(want, i), e;
        if (integers) {   /* exactly: an int64 past 2^53 is not a double */
            int64_t gi = nopi_get_i(got, i), wi = nopi_get_i(want, i);
            if (gi == wi)
                continue;
            /* the difference fits in uint64 when taken larger minus smaller */
            e = (double)(gi > wi ? (uint64_t)gi - (uint64_t)wi : (uint64_t)wi - (uint64_t)gi);
        } else {
            /* as torch.isclose with equal_nan=True: NaN matches NaN, an infinity only itself
             * (the tolerance of an infinite want is infinite, and would take anything), and
             * the error, which torch takes in the tensor's dtype, must be finite there:
             * float16's 60000 and -60000 differ by an infinity */
            if ((isnan(g) && isnan(w)) || g == w)
                continue;
            e = isfinite(g) && isfinite(w) ? in_dtype(fabs(g - w), got->dtype) : INFINITY;
        }
        bool finite = isfinite(e);
        if (e > res->max_abs_error)
            res->max_abs_error = e;
        /* the allowed error too is torch's, taken in the dtype: atol + |rtol * want|, each
         * step rounded (float16's atol of 1e-5 is 1.00136e-5, and an error of exactly that
         * is close) */
        if (finite && e <= in_dtype(atol + fabs(in_dtype(rtol * w, got->dtype)), got->dtype))
            continue;
        res->mismatches++;
        /* keep the worst few, largest error first (insertion into a short sorted list) */
        int n = res->nworst < 8 ? res->nworst : 7;
        int k = n;
        while (k > 0 && res->worst[k - 1].error < e) {
            res->worst[k] = res->worst[k - 1];
            k--;
        }
        if (k < 8) {
            res->worst[k] = (nop_mismatch){ i, g, w, e };
            if (res->nworst < 8)
                res->nworst++;
        }
    }
    if (res->why[0] && res->mismatches == 0)
        res->mismatches = 1;   /* a dtype difference alone is a mismatch */
}

void nop_default_tolerances(enum nop_dtype d, double *rtol, double *atol)
{
    /* torch.testing.assert_close's defaults; exact for the integer types */
    switch (d) {
    case NOP_F32: *rtol = 1.3e-6; *atol = 1e-5; break;
    case NOP_F16: *rtol = 1e-3; *atol = 1e-5; break;
    case NOP_BF16: *rtol = 1.6e-2; *atol = 1e-5; break;
    default: *rtol = 0; *atol = 0; break;
    }
}

void nop_tensor_index_str(const nop_tensor *t, int64_t i, char *buf, size_t size)
{
    int nd = nop_tensor_ndim(t);
    const int64_t *s = nop_tensor_sizes(t);
    int64_t idx[NOPI_MAX_DIMS];
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < nd && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "",
                                 (long long)idx[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
}
