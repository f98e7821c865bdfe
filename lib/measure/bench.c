/*
 * bench.c - timing an op on the virtual device: warm-up, timed runs, statistics.
 *
 * The harness adds two clock reads per timed run around nop_device_run; everything else
 * (inputs, freeing outputs) stays outside the timing.  On a device that isolates user code,
 * the whole loop runs inside one worker process (device/sandbox.h), so a timed run costs
 * what it costs in-process, and the worker sends the figures back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "device/library.h"
#include "isolate/sandbox.h"

/* What a worker sends besides the fastest run's result. */
enum { REC_STATS = NOPI_REC_USER, REC_SECONDS, REC_PROGRESS };
struct stats_rec {
    int32_t runs;
    double mean, sd, median, min, max, p90, p99, total;
};
struct progress_rec {
    int32_t done, total;
    double elapsed;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted values, interpolating between neighbours. */
static double quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

static void statistics(nop_bench_result *res)
{
    int n = res->runs;
    double *sorted = malloc((size_t)n * sizeof *sorted);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += res->seconds[i];
    res->total = sum;
    res->mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += (res->seconds[i] - res->mean) * (res->seconds[i] - res->mean);
    res->sd = n > 1 ? sqrt(sq / (n - 1)) : 0;
    if (!sorted)
        return;
    memcpy(sorted, res->seconds, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    res->min = sorted[0];
    res->max = sorted[n - 1];
    res->median = quantile(sorted, n, 0.5);
    res->p90 = quantile(sorted, n, 0.9);
    res->p99 = quantile(sorted, n, 0.99);
    free(sorted);
}

/* ---- in a worker process ---------------------------------------------------------------- */

typedef struct bench_work {
    const nop_library *lib;
    int op;
    const nop_value *args;
    int nargs;
    const nop_bench_opts *opts;
} bench_work;

static void progress_to_parent(void *ctx, int done, int total, double elapsed)
{
    struct progress_rec p = { done, total, elapsed };
    nopi_wire_put(ctx, REC_PROGRESS, &p, sizeof p);
}

static int bench_in_worker(nop_device *cdev, void *ctx, nopi_wire *w, nop_error *err)
{
    const bench_work *bw = ctx;
    nop_bench_opts o = *bw->opts;
    if (o.progress) {
        o.progress = progress_to_parent;
        o.progress_ctx = w;
    }
    nop_library *opened;   /* loaded once here, not per run, if the caller only described it */
    if (!bw->lib->handle)   /* its constructors may hang: bounded as a shape function is */
        nopi_wire_phase(w, NOPI_PHASE_LOAD, 0, "");
    const nop_library *lib = nopi_library_runnable(bw->lib, &opened, err);
    if (!lib)
        return -1;
    nop_bench_result r;
    int rc = nop_bench(cdev, lib, bw->op, bw->args, bw->nargs, &o, &r, err);
    if (rc != 0)
        return rc;
    struct stats_rec s = { r.runs, r.mean, r.sd, r.median, r.min, r.max, r.p90, r.p99,
                           r.total };
    if (nopi_wire_put(w, REC_STATS, &s, sizeof s) != 0 ||
        nopi_wire_put(w, REC_SECONDS, r.seconds, (size_t)r.runs * sizeof *r.seconds) != 0 ||
        nopi_wire_put_run(w, &r.fastest) != 0)
        return nopi_fault(err, NOP_FAULT_HOST, "cannot send the figures");
    return 0;   /* r is freed with the process */
}

typedef struct bench_take {
    nop_bench_result *res;
    const nop_bench_opts *opts;
} bench_take;

/* Parent side: checks and keeps what the worker sent. */
static int take_bench(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    bench_take *bt = ctx;
    nop_bench_result *res = bt->res;
    if (type == REC_STATS) {
        struct stats_rec s;
        if (len != sizeof s)
            return -1;
        memcpy(&s, data, sizeof s);
        double figures[] = { s.mean, s.sd, s.median, s.min, s.max, s.p90, s.p99, s.total };
        for (size_t i = 0; i < NOPI_ARRAY_LEN(figures); i++)
            if (!nopi_plausible_seconds(figures[i]))
                return -1;
        if (s.runs < 1)
            return -1;
        *res = (nop_bench_result){ s.runs, res->seconds, s.mean, s.sd, s.median, s.min,
                                   s.max, s.p90, s.p99, s.total, res->fastest };
        return 0;
    }
    if (type == REC_SECONDS) {
        if (res->seconds || !res->runs || len != (size_t)res->runs * sizeof *res->seconds ||
            !(res->seconds = malloc(len)))
            return -1;
        memcpy(res->seconds, data, len);
        for (int i = 0; i < res->runs; i++)
            if (!nopi_plausible_seconds(res->seconds[i]))
                return -1;
        return 0;
    }
    if (type == REC_PROGRESS) {
        struct progress_rec p;
        if (len != sizeof p)
            return -1;
        memcpy(&p, data, sizeof p);
        if (!nopi_plausible_seconds(p.elapsed))
            return -1;
        if (bt->opts->progress)
            bt->opts->progress(bt->opts->progress_ctx, p.done, p.total, p.elapsed);
        return 0;
    }
    return nopi_run_take(&res->fastest, type, data, len, own) == 0 ? 0 : -1;
}

int nop_bench(nop_device *dev, const nop_library *lib, int op, const nop_value *args,
              int nargs, const nop_bench_opts *opts, nop_bench_result *res, nop_error *err)
{
    memset(res, 0, sizeof *res);
    nop_device_opts dopts = nopi_device_opts(dev);
    if (dopts.isolate) {
        if (op < 0 || op >= nop_library_op_count(lib))
            return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no op %d in '%s'", op,
                             nop_library_name(lib));
        nop_opinfo info;
        nop_library_op(lib, op, &info);
        bench_work bw = { lib, op, args, nargs, opts };
        bench_take bt = { res, opts };
        /* the runs it may make: warm-ups and timed ones.  Timed by seconds, any number: the
         * budget then bounds the whole bench, at the timed seconds plus each warm-up run and
         * the last timed one taking all a run may (its shape function and every core their
         * timeouts, one after another, with the worker's grace for each) */
        long runs = opts->iters > 0 && opts->warmup >= 0 ? (long)opts->warmup + opts->iters : 0;
        double run_max = dopts.timeout * (nopi_device_cores(dev, lib) + 1) + 4.0;
        double budget = runs > 0 && runs < 100000000 ? 10.0 + dopts.timeout
                        : runs > 0 ? 10.0 + (double)(runs + 1) * run_max
                                   : 10.0 + opts->seconds + (opts->warmup + 1) * run_max;
        char name[256];   /* as the worker's phases name it */
        nopi_op_qualname(lib, info.name, name, sizeof name);
        int rc = nopi_sandbox_call(dev, name, lib->path, budget,
                                   runs < 100000000 ? (int)runs : 0, nopi_device_cores(dev, lib),
                                   bench_in_worker, &bw, take_bench, &bt, err);
        if (rc == 0 && (!res->seconds || !res->fastest.cores))
            rc = nopi_fault(err, NOP_FAULT_WORKER, "the device process sent no figures");
        if (rc != 0)
            nop_bench_result_clear(res);
        return rc;
    }
    if (opts->warmup < 0 || opts->iters < 0 || (opts->iters == 0 && !(opts->seconds > 0)))
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a benchmark needs a positive "
                         "number of runs or of seconds");
    for (int i = 0; i < opts->warmup; i++) {
        nop_run_result r;
        int rc = nop_device_run(dev, lib, op, args, nargs, &r, err);
        nop_run_result_clear(&r);
        if (rc != 0)
            return -1;
    }
    int cap = opts->iters ? opts->iters : 1024;
    res->seconds = malloc((size_t)cap * sizeof *res->seconds);
    if (!res->seconds)
        return nopi_nomem(err);
    double start = nopi_now();
    for (;;) {
        if (opts->iters ? res->runs >= opts->iters
                        : res->runs > 0 && nopi_now() - start >= opts->seconds)
            break;
        if (res->runs == cap) {
            double *v = realloc(res->seconds, (size_t)cap * 2 * sizeof *v);
            if (!v) {
                nop_bench_result_clear(res);
                return nopi_nomem(err);
            }
            res->seconds = v;
            cap *= 2;
        }
        nop_run_result r;
        double t0 = nopi_now();
        int rc = nop_device_run(dev, lib, op, args, nargs, &r, err);
        double t = nopi_now() - t0;
        if (rc != 0) {   /* nothing is kept, as when the bench runs in a worker */
            nop_run_result_clear(&r);
            nop_bench_result_clear(res);
            return -1;
        }
        /* counters are the same every run; host times are not, and the least disturbed
         * run says best what the kernel's own code costs */
        if (res->runs == 0 || t < res->min) {
            nop_run_result_clear(&res->fastest);
            res->fastest = r;
            res->min = t;
        } else {
            nop_run_result_clear(&r);
        }
        res->seconds[res->runs++] = t;
        if (opts->progress)
            opts->progress(opts->progress_ctx, res->runs, opts->iters, nopi_now() - start);
    }
    statistics(res);
    return 0;
}

void nop_bench_result_clear(nop_bench_result *res)
{
    free(res->seconds);
    nop_run_result_clear(&res->fastest);
    memset(res, 0, sizeof *res);
}
