/*
 * cmd-bench.c - `neuronop bench LIB|DIR OP ARG...`: throughput of an op on the virtual
 * device, with warm-up, timed runs, the spread of the host times and what each core did.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static struct device_cli dc;
static long warmup = 10, iters = -1;
static double seconds;
static bool json, verbose;

static const struct option_spec options[] = {
    { 0, "warmup", OPT_INT, &warmup, "N", "untimed runs first (default 10)" },
    { 0, "iters", OPT_INT, &iters, "N", "timed runs (default 100)" },
    { 0, "time", OPT_DOUBLE, &seconds, "SECONDS", "time runs for this long instead of --iters" },
    DEVICE_OPTIONS(dc),
    { 0, "json", OPT_FLAG, &json, NULL, "print every figure as JSON" },
    { 'v', "verbose", OPT_FLAG, &verbose, NULL, "show the build steps of a DIR" },
    { 0, NULL, 0, NULL, NULL, NULL },
};

static const struct command_spec spec = {
    "bench", "[options] LIB.so|DIR OP [ARG...]",
    "Measure the throughput of op OP on the virtual GPSIMD device: warm-up runs,\n"
    "then timed runs; arguments as for neuronop run.",
    options, 2, -1,
};

static const char what_a_run_is[] =
    "a timed run is one launch of the op on the virtual device: binding the arguments, the "
    "shape function, the kernel on every core and the output checks; inputs are made once, "
    "beforehand";

/* A progress line on a terminal, for benchmarks longer than a second. */
static void progress(void *ctx, int done, int total, double elapsed)
{
    bool *shown = ctx;
    if (elapsed < 1.0 || !isatty(STDERR_FILENO))
        return;
    if (total)
        fprintf(stderr, "\r  run %d of %d (%.1f s)", done, total, elapsed);
    else
        fprintf(stderr, "\r  run %d (%.1f s of %.1f)", done, elapsed, seconds);
    *shown = true;
}

static void print_ms(const char *label, double s)
{
    printf("%s %.3f ms", label, s * 1e3);
}

static void print_human(const char *opname, const nop_profile *p, const nop_bench_result *b)
{
    const nop_run_result *r = &b->last;
    printf("%s on %s: %d core%s (%s, %d host thread%s), %ld warm-up and %d timed runs\n",
           opname, nop_profile_name(p), r->ncores, r->ncores == 1 ? "" : "s",
           dc.schedule ? dc.schedule : "parallel", r->threads, r->threads == 1 ? "" : "s",
           warmup, b->runs);
    printf("(%s)\n", what_a_run_is);
    print_ms("host time per run:", b->mean);
    print_ms(" \xc2\xb1", b->sd);
    print_ms(" (mean \xc2\xb1 sd), median", b->median);
    printf("\n");
    print_ms("  min", b->min);
    print_ms("  max", b->max);
    print_ms("  p90", b->p90);
    print_ms("  p99", b->p99);
    printf("\n");
    printf("host throughput (iter/sec): %.2f\n", 1.0 / b->mean);
    printf("per core, last run:\n");
    printf("  %4s %10s %10s %10s %9s %9s %10s %6s %9s\n", "core", "std elems", "stream",
           "TCM bytes", "transfers", "streams", "tensorlib", "stack", "host ms");
    for (int i = 0; i < r->ncores; i++) {
        const nop_core_report *c = &r->cores[i];
        printf("  %4d %10lld %10lld %10lld %9lld %9lld %10lld %6zu %9.3f\n", c->id,
               (long long)c->counters.std_elems,
               (long long)(c->counters.stream_elems + c->counters.stream_slow_elems),
               (long long)c->counters.tcm_bytes, (long long)c->counters.tcm_transfers,
               (long long)c->counters.streams_opened, (long long)c->counters.tensorlib_elems,
               c->stack_high_water, c->seconds * 1e3);
    }
}

static void print_json(const char *opname, const nop_profile *p, const nop_bench_result *b)
{
    const nop_run_result *r = &b->last;
    printf("{\"op\": ");
    print_json_string(stdout, opname);
    printf(", \"device\": ");
    print_json_string(stdout, nop_profile_name(p));
    printf(", \"cores\": %d, \"threads\": %d, \"warmup\": %ld, \"runs\": %d,\n", r->ncores,
           r->threads, warmup, b->runs);
    printf(" \"host\": {\"mean\": %.9f, \"sd\": %.9f, \"median\": %.9f, \"min\": %.9f, "
           "\"max\": %.9f, \"p90\": %.9f, \"p99\": %.9f, \"throughput\": %.6f},\n", b->mean,
           b->sd, b->median, b->min, b->max, b->p90, b->p99, 1.0 / b->mean);
    printf(" \"per_core\": [");
    for (int i = 0; i < r->ncores; i++) {
        const nop_core_report *c = &r->cores[i];
        printf("%s\n  {\"id\": %d, \"seconds\": %.9f, \"stack_high_water\": %zu, "
               "\"std_elems\": %lld, \"stream_elems\": %lld, \"stream_slow_elems\": %lld, "
               "\"tcm_bytes\": %lld, \"tcm_transfers\": %lld, \"streams_opened\": %lld, "
               "\"tensorlib_calls\": %lld, \"tensorlib_elems\": %lld, \"printf_calls\": %lld}",
               i ? "," : "", c->id, c->seconds, c->stack_high_water,
               (long long)c->counters.std_elems, (long long)c->counters.stream_elems,
               (long long)c->counters.stream_slow_elems, (long long)c->counters.tcm_bytes,
               (long long)c->counters.tcm_transfers, (long long)c->counters.streams_opened,
               (long long)c->counters.tensorlib_calls, (long long)c->counters.tensorlib_elems,
               (long long)c->counters.printf_calls);
    }
    printf("\n]}\n");
}

int cmd_bench(int argc, char **argv)
{
    char **args;
    int nargs;
    dc.timeout = 0;
    int rc = parse_options(&spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : NOP_EXIT_USAGE;
    nop_library *lib = NULL;
    nop_profile *profile = NULL;
    nop_device *dev = NULL;
    nop_value *vals = NULL;
    nop_tensor **tensors = NULL;
    nop_bench_result b = { 0 };
    int opi;
    if (warmup < 0 || iters == 0 || iters < -1 || seconds < 0 || (seconds > 0 && iters > 0)) {
        report_plain_error("--warmup takes 0 or more runs, --iters 1 or more, --time a "
                           "positive number of seconds; give --iters or --time, not both");
        rc = NOP_EXIT_USAGE;
        goto out;
    }
    if ((rc = open_target(args[0], verbose, &lib)) != 0 ||
        (rc = parse_op_args(lib, args[1], nargs - 2, args + 2, (uint64_t)dc.seed, &opi, &vals,
                            &tensors)) != 0 ||
        (rc = device_cli_open(&dc, &profile, &dev)) != 0)
        goto out;
    bool shown = false;
    nop_bench_opts o = { (int)warmup, seconds > 0 ? 0 : iters > 0 ? (int)iters : 100, seconds,
                         progress, &shown };
    nop_error err;
    int brc = nop_bench(dev, lib, opi, vals, nargs - 2, &o, &b, &err);
    if (shown)
        fprintf(stderr, "\r%60s\r", "");
    if (brc != 0) {
        rc = report_error(&err);
        goto out;
    }
    if (json)
        print_json(args[1], profile, &b);
    else
        print_human(args[1], profile, &b);
    fflush(stdout);   /* results first, then any warning about them */
    /* hyperfine's rule of thumb: a spread this large means the machine was busy */
    if (b.runs > 2 && (b.sd > 0.1 * b.mean || b.max > 3 * b.median))
        report_warning("the runs' times spread widely (sd %.0f%% of the mean, max %.1fx the "
                       "median): other work on this machine disturbed them; close it or raise "
                       "--iters", 100 * b.sd / b.mean, b.max / b.median);
out:
    nop_bench_result_clear(&b);
    free_op_args(vals, tensors, nargs - 2);
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(lib);
    free_option_lists(&spec);
    free(args);
    return rc;
}
