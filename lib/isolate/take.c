/*
 * take.c - the parent's side of a run's records (see sandbox.h): decoding what a worker sent
 * into a nop_run_result.  It believes nothing it reads: every length, count, dtype, core
 * number and span kind is checked before it is used, and a record that fails a check is
 * malformed (the work fails).  Nothing here runs in a worker.
 */
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "device/trace.h"

#define MAX_BYTES (1ull << 36)     /* no tensor sent is larger than 64 GiB */

/* The output's description: a tensor without data (shape-only) until its data comes, next.
 * Its data was once zeros until then, and a worker that never sent it had zeros judged: a
 * forged description of 16 GiB, alone, had the parent compare and describe 16 GiB of zeros
 * for minutes past its deadline (a red team's find). */
static int take_output(nop_run_result *r, const void *data, size_t len)
{
    struct nopi_tensor_hdr h;
    if (len != sizeof h || r->output)
        return -1;
    memcpy(&h, data, sizeof h);
    if (h.dtype < 0 || h.dtype > NT_U8 || h.ndim < 0 || h.ndim > NOPI_MAX_DIMS)
        return -1;
    uint64_t bytes = nopi_dtype_size((nt_dtype)h.dtype);
    for (int i = 0; i < h.ndim; i++) {
        if (h.sizes[i] < 0 || (h.sizes[i] && bytes > MAX_BYTES / (uint64_t)h.sizes[i]))
            return -1;
        bytes *= (uint64_t)h.sizes[i];
    }
    return (r->output = nopi_tensor_alloc((nt_dtype)h.dtype, h.ndim, h.sizes, true)) ? 0 : -1;
}

/* The output's bytes, all of them: the block itself when it may be kept, else a copy. */
static int take_output_data(nop_run_result *r, const void *data, size_t len, void **own)
{
    nt_tensor *t = r->output;
    if (!t || !t->shape_only || len != (size_t)t->numel * t->itemsize)
        return -1;
    if (own && *own && len) {
        t->data = *own;
        *own = NULL;
    } else {   /* (an empty tensor's pointer is still a valid one) */
        if (!(t->data = malloc(len ? len : 1)))
            return -1;
        memcpy(t->data, data, len);
    }
    t->shape_only = false;
    return 0;
}

int nopi_run_taken(nop_run_result *r)
{
    if (!r->output || !r->output->shape_only)
        return 0;
    nopi_tensor_free(r->output);
    r->output = NULL;
    return -1;
}

bool nopi_plausible_seconds(double s)
{
    return s >= 0 && s < 1e9;   /* (false for a NaN) */
}

/* A point of a core's trace: its seconds, and its cycles a number from 0 to what no run
 * counts (a forged NaN came out as "ts": nan in the trace's JSON: a reviewer's find). */
static bool plausible_point(const nopi_trace_point *p)
{
    return nopi_plausible_seconds(p->host) && nopi_plausible_seconds(p->compute) &&
           p->counted >= 0 && p->counted < 1e18;
}

/* The per-core reports, copied as they came: their figures believable, each bool a bool (a
 * byte of another value would be one no C program may read as a bool). */
static bool plausible_cores(const nop_core_report *c, int n)
{
    for (int i = 0; i < n; i++) {
        unsigned char failed;
        memcpy(&failed, &c[i].failed, 1);
        if (failed > 1 || !nopi_plausible_seconds(c[i].seconds))
            return false;
        for (int k = 0; k < NOP_COST_CATEGORIES; k++)
            if (!nopi_plausible_seconds(c[i].category_seconds[k]))
                return false;
    }
    return true;
}

/* A core's trace: cores come in order, after the run's per-core reports. */
static int take_trace(nop_run_result *r, const void *data, size_t len)
{
    struct nopi_trace_hdr h;
    if (len < sizeof h || !r->cores)
        return -1;
    memcpy(&h, data, sizeof h);
    nop_trace *t = r->trace;
    if (!t) {
        if (!(t = r->trace = calloc(1, sizeof *t)) ||
            !(t->cores = calloc((size_t)r->ncores, sizeof *t->cores)))
            return -1;
    }
    if (h.core != t->ncores || h.core >= r->ncores || h.nspans < 0 ||
        h.nspans > NOPI_TRACE_SPANS || len - sizeof h != (size_t)h.nspans * sizeof(nopi_trace_span))
        return -1;
    if (!plausible_point(&h.start) || !plausible_point(&h.end))
        return -1;
    nopi_trace_span *spans = NULL;   /* a core may have none: NULL, which memcpy may not take */
    if (h.nspans) {
        if (!(spans = malloc(len - sizeof h)))
            return -1;
        memcpy(spans, (const char *)data + sizeof h, len - sizeof h);
    }
    for (int s = 0; s < h.nspans; s++) {   /* kinds index the writer's tables */
        if (spans[s].kind < 0 || spans[s].kind >= NOPI_SPAN_KINDS ||
            !plausible_point(&spans[s].a) || !plausible_point(&spans[s].b)) {
            free(spans);
            return -1;
        }
    }
    nopi_trace *c = &t->cores[h.core];
    memcpy(c->total, h.total, sizeof c->total);
    c->start = h.start;
    c->end = h.end;
    c->spans = spans;
    c->nspans = h.nspans;
    t->ncores++;
    return 0;
}

static int take_one(nop_run_result *r, uint32_t type, const void *data, size_t len, void **own)
{
    switch (type) {
    case NOPI_REC_DONE:
        return 0;
    case NOPI_REC_RUN: {
        struct nopi_run_hdr h;
        if (len != sizeof h)
            return -1;
        memcpy(&h, data, sizeof h);
        if (!nopi_plausible_seconds(h.seconds))
            return -1;
        r->threads = h.threads;
        r->printf_lost = h.printf_lost != 0;
        r->stack_size = (size_t)h.stack_size;
        r->seconds = h.seconds;
        return 0;
    }
    case NOPI_REC_OUTPUT:
        return take_output(r, data, len);
    case NOPI_REC_OUTPUT_DATA:
        return take_output_data(r, data, len, own);
    case NOPI_REC_PRINTF:
        if (r->printf_text)
            return -1;
        if (own && *own) {   /* a large record's own block (watch.c): kept, not copied */
            if (!(r->printf_text = realloc(*own, len + 1)))
                return -1;
            *own = NULL;
        } else {
            if (!(r->printf_text = malloc(len + 1)))
                return -1;
            memcpy(r->printf_text, data, len);
        }
        r->printf_text[len] = '\0';
        /* a kernel's text reaches the terminal and the JSON report as the worker's messages
         * do: plain (an escape sequence could hide lines, a byte that is not UTF-8 breaks
         * JSON; and a dead worker's text, cut from its ring, may start mid-character) */
        nopi_text_clean(r->printf_text);
        return 0;
    case NOPI_REC_PRINTF_LOST:
        r->printf_lost = true;
        return 0;
    case NOPI_REC_CORES: {   /* checked before they are the result's, which a failed run
                              * keeps (a reviewer's find: refused, they were still shown) */
        size_t n = len / sizeof *r->cores;
        nop_core_report *c;
        if (r->cores || len % sizeof *r->cores || n == 0 || n > NOPI_MAX_CORES ||
            !(c = malloc(len)))
            return -1;
        memcpy(c, data, len);
        if (!plausible_cores(c, (int)n)) {
            free(c);
            return -1;
        }
        r->cores = c;
        r->ncores = (int)n;
        return 0;
    }
    case NOPI_REC_TRACE:
        return take_trace(r, data, len);
    default:
        return 1;
    }
}

int nopi_run_take(nop_run_result *r, uint32_t type, const void *data, size_t len, void **own)
{
    /* an output's description, and no data after it: malformed, the output dropped, and the
     * record still taken (the printf text the parent recovers from a worker that died after
     * a description is shown: a reviewer's find) */
    bool cut = type != NOPI_REC_OUTPUT_DATA && nopi_run_taken(r) != 0;
    if (cut && type == NOPI_REC_OUTPUT)
        return -1;   /* (not another description in its place) */
    int rc = take_one(r, type, data, len, own);
    return cut ? -1 : rc;
}
