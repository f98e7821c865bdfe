/*
 * trace.c - recording each core's spans during a traced run, and writing them as Chrome
 * trace-event JSON (the format Perfetto and chrome://tracing load).
 *
 * The file: metadata events name the process and one thread per core; each core's kernel run
 * and its TCM copies, tensor-library calls and printf calls are complete events ("X") on the
 * core's thread, properly nested; stream lifetimes, which overlap one another, are nestable
 * async events ("b"/"e"), which viewers draw on tracks of their own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int nopi_trace_kind_of(int category)
{
    switch (category) {
    case NOP_COST_TCM: return NOPI_SPAN_TCM;
    case NOP_COST_TENSORLIB: return NOPI_SPAN_TENSORLIB;
    case NOP_COST_PRINTF: return NOPI_SPAN_PRINTF;
    default: return -1;   /* element accesses and small queries: counted, not drawn */
    }
}

nopi_trace_point nopi_trace_at(nopi_core *c, double now)
{
    double api = 0;
    for (int k = 1; k < NOP_COST_CATEGORIES; k++)
        api += c->api_seconds[k];
    double compute = now - c->started - api;
    return (nopi_trace_point){ now - c->run->t0, compute > 0 ? compute : 0,
                               nopi_model_counted(c->run->profile, &c->n) };
}

static void add_span(nopi_trace *t, int kind, int stream, nopi_trace_point a,
                     nopi_trace_point b)
{
    t->total[kind]++;
    if (t->nspans == NOPI_TRACE_SPANS)
        return;   /* full: counted above, shown in the kernel span's args */
    if (!t->spans && !(t->spans = malloc(NOPI_TRACE_SPANS * sizeof *t->spans)))
        return;   /* no memory for a trace is no reason to fail the kernel: it is counted */
    t->spans[t->nspans++] = (nopi_trace_span){ kind, stream, a, b };
}

void nopi_trace_span_end(nopi_core *c, int kind, int stream, nopi_trace_point a, double now)
{
    add_span(&c->trace, kind, stream, a, nopi_trace_at(c, now));
}

void nopi_trace_finish(nopi_core *c, double compute_seconds, double on_cpu)
{
    nopi_trace *t = &c->trace;
    for (int i = 0; i < t->nspans; i++) {
        t->spans[i].a.compute *= on_cpu;
        t->spans[i].b.compute *= on_cpu;
    }
    t->start = (nopi_trace_point){ c->started - c->run->t0, 0, 0 };
    t->end = (nopi_trace_point){ c->started + c->seconds - c->run->t0, compute_seconds,
                                 nopi_model_counted(c->run->profile, &c->n) };
    for (int s = 0; s < c->nstreams; s++)
        if (c->streams[s].open) {   /* the kernel left it open: it lived to the end */
            nopi_trace_point opened = c->streams[s].opened;
            opened.compute *= on_cpu;
            add_span(t, NOPI_SPAN_STREAM, s, opened, t->end);
        }
}

void nopi_trace_free(nop_trace *t)
{
    for (int i = 0; t && i < t->ncores; i++)
        free(t->cores[i].spans);
    if (t)
        free(t->cores);
    free(t);
}

/* ---- writing -------------------------------------------------------------------------- */

static const char *const kind_names[NOPI_SPAN_KINDS] = { "TCM", "tensor library",
                                                        "printf", "stream" };
static const char *const kind_cats[NOPI_SPAN_KINDS] = { "tcm", "tensorlib", "printf",
                                                       "stream" };

typedef struct writer {
    nopi_strbuf sb;
    const nop_run_result *r;
    const nop_profile *p;
    const nop_model *m;
    enum nop_trace_clock clock;
    bool first;                 /* no event written yet */
} writer;

/* A point's time in microseconds, the trace format's unit.  The device clock starts each
 * core after the launch, as the cost model does. */
static double micros(const writer *w, const nopi_trace_point *pt)
{
    if (w->clock == NOP_TRACE_HOST)
        return pt->host * 1e6;
    double cycles = w->p->cost.launch_cycles + nopi_model_compute(w->p, w->r, w->m, pt->compute) +
                    pt->counted;
    return cycles / w->p->cost.clock_mhz;
}

/* Starts an event: its separator and the fields every event has. */
static void event(writer *w, const char *ph, const char *name, const char *cat, int tid)
{
    nopi_sb_puts(&w->sb, w->first ? "\n  {" : ",\n  {");
    w->first = false;
    nopi_sb_printf(&w->sb, "\"ph\": \"%s\", \"pid\": 1, \"tid\": %d, \"name\": ", ph, tid);
    nopi_sb_json_string(&w->sb, name);
    if (cat)
        nopi_sb_printf(&w->sb, ", \"cat\": \"%s\"", cat);
}

static void complete(writer *w, const char *name, const char *cat, int tid,
                     const nopi_trace_point *a, const nopi_trace_point *b)
{
    double ts = micros(w, a), end = micros(w, b);
    event(w, "X", name, cat, tid);
    nopi_sb_printf(&w->sb, ", \"ts\": %.3f, \"dur\": %.3f", ts, end > ts ? end - ts : 0);
}

static void name_thread(writer *w, int tid, const char *name)
{
    event(w, "M", "thread_name", NULL, tid);
    nopi_sb_puts(&w->sb, ", \"args\": {\"name\": ");
    nopi_sb_json_string(&w->sb, name);
    nopi_sb_printf(&w->sb, "}}");
    event(w, "M", "thread_sort_index", NULL, tid);
    nopi_sb_printf(&w->sb, ", \"args\": {\"sort_index\": %d}}", tid);
}

static void write_core(writer *w, int i, int64_t *spans, int64_t *drawn)
{
    const nopi_trace *t = &w->r->trace->cores[i];
    const nop_counters *n = &w->r->cores[i].counters;
    char name[32];
    snprintf(name, sizeof name, "core %d", i);
    name_thread(w, i, name);
    complete(w, "kernel", "kernel", i, &t->start, &t->end);
    nopi_sb_printf(&w->sb, ", \"args\": {\"std_elems\": %lld, \"stream_elems\": %lld, "
                   "\"tcm_bytes\": %lld, \"tcm_transfers\": %lld, \"tensorlib_elems\": %lld, "
                   "\"printf_calls\": %lld, \"not_drawn\": {",
                   (long long)n->std_elems, (long long)(n->stream_elems + n->stream_slow_elems),
                   (long long)n->tcm_bytes, (long long)n->tcm_transfers,
                   (long long)n->tensorlib_elems, (long long)n->printf_calls);
    int64_t drawn_by_kind[NOPI_SPAN_KINDS] = { 0 };
    for (int s = 0; s < t->nspans; s++)
        drawn_by_kind[t->spans[s].kind]++;
    for (int k = 0; k < NOPI_SPAN_KINDS; k++) {
        nopi_sb_printf(&w->sb, "%s\"%s\": %lld", k ? ", " : "", kind_cats[k],
                       (long long)(t->total[k] - drawn_by_kind[k]));
        *spans += t->total[k];
    }
    nopi_sb_puts(&w->sb, "}}}");
    *drawn += t->nspans;
    for (int s = 0; s < t->nspans; s++) {
        const nopi_trace_span *sp = &t->spans[s];
        if (sp->kind != NOPI_SPAN_STREAM) {
            complete(w, kind_names[sp->kind], kind_cats[sp->kind], i, &sp->a, &sp->b);
            nopi_sb_puts(&w->sb, "}");
            continue;
        }
        /* async: id names the pair; viewers give each open stream a track */
        const nopi_trace_point *pts[2] = { &sp->a, &sp->b };
        for (int e = 0; e < 2; e++) {
            event(w, e ? "e" : "b", "stream", "stream", i);
            nopi_sb_printf(&w->sb, ", \"id\": \"core%d.stream%d\", \"ts\": %.3f}", i,
                           sp->stream, micros(w, pts[e]));
        }
    }
}

int nop_trace_save(const nop_run_result *r, const nop_profile *p, const nop_model *m,
                   enum nop_trace_clock clock, const char *opname, const char *path,
                   nop_trace_info *info, nop_error *err)
{
    memset(info, 0, sizeof *info);
    if (!r->trace)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "the run was not traced");
    writer w = { NOPI_STRBUF_INIT, r, p, m, clock, true };
    nopi_sb_puts(&w.sb, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"op\": ");
    nopi_sb_json_string(&w.sb, opname);
    nopi_sb_puts(&w.sb, ", \"device\": ");
    nopi_sb_json_string(&w.sb, p->name);
    nopi_sb_printf(&w.sb, ", \"clock\": \"%s\", \"span_limit_per_core\": %d},\n"
                   "\"traceEvents\": [", clock == NOP_TRACE_HOST ? "host" : "modeled",
                   NOPI_TRACE_SPANS);
    char title[200];
    snprintf(title, sizeof title, "neuronop: %s on %s (%s clock)", opname, p->name,
             clock == NOP_TRACE_HOST ? "host" : "modeled device");
    event(&w, "M", "process_name", NULL, 0);
    nopi_sb_puts(&w.sb, ", \"args\": {\"name\": ");
    nopi_sb_json_string(&w.sb, title);
    nopi_sb_puts(&w.sb, "}}");
    for (int i = 0; i < r->trace->ncores && i < r->ncores; i++)
        write_core(&w, i, &info->spans, &info->drawn);
    /* the op's own track, under the cores: its launch on the device, or the whole host run */
    int op_tid = r->ncores;
    name_thread(&w, op_tid, "op");
    nopi_trace_point zero = { 0, 0, 0 };
    if (clock == NOP_TRACE_HOST) {
        nopi_trace_point end = { r->seconds, 0, 0 };
        complete(&w, "run", "op", op_tid, &zero, &end);
    } else {
        event(&w, "X", "launch", "op", op_tid);
        nopi_sb_printf(&w.sb, ", \"ts\": 0, \"dur\": %.3f",
                       p->cost.launch_cycles / p->cost.clock_mhz);
    }
    nopi_sb_puts(&w.sb, "}\n]}\n");
    if (w.sb.oom) {
        nopi_sb_free(&w.sb);
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "out of memory for the trace");
    }
    const void *bufs[] = { w.sb.s };
    int rc = nopi_write_output(path, bufs, &w.sb.len, 1, err);
    nopi_sb_free(&w.sb);
    return rc;
}
