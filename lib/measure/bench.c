/*
 * bench.c - timing an op on the virtual device: warm-up, timed runs, statistics.
 *
 * The harness adds two clock reads per timed run around nop_device_run; everything else
 * (inputs, freeing outputs) stays outside the timing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"

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

int nop_bench(nop_device *dev, const nop_library *lib, int op, const nop_value *args,
              int nargs, const nop_bench_opts *opts, nop_bench_result *res, nop_error *err)
{
    memset(res, 0, sizeof *res);
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
            if (!v)
                return nopi_nomem(err);
            res->seconds = v;
            cap *= 2;
        }
        nop_run_result r;
        double t0 = nopi_now();
        int rc = nop_device_run(dev, lib, op, args, nargs, &r, err);
        double t = nopi_now() - t0;
        if (rc != 0) {
            nop_run_result_clear(&r);
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
