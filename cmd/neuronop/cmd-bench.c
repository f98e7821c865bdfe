/*
 * cmd-bench.c - `neuronop bench LIB|DIR OP ARG...`: throughput of an op on the virtual
 * device, with warm-up, timed runs, the spread of the host times and what each core did;
 * the cost model's figures, a trace of one more run (--trace), the comparison with an
 * earlier report (--baseline) and huge pages for large inputs (--hugepages).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static struct device_cli dc = { .spec = &bench_spec };
static long warmup = 10, iters = -1;
static double seconds, max_regression = -1;   /* -1: not given; then 5 */
static const char *baseline, *trace, *trace_clock;
static bool json, verbose, hugepages;

/* --trace-clock's words, in enum nop_trace_clock order. */
static const char *const clock_names[] = { "modeled", "host", NULL };

static const struct option_spec options[] = {
    OPTION_RANGE(0, "warmup", OPT_INT, &warmup, "N", "untimed runs first (default 10)", 0,
                 1000000),
    OPTION_RANGE(0, "iters", OPT_INT, &iters, "N", "timed runs (default 100)", 1, 100000000),
    OPTION_RANGE(0, "time", OPT_DOUBLE, &seconds, "SECONDS",
                 "time runs for this long instead of --iters", 0.001, 86400),
    OPTION(0, "baseline", OPT_STRING, &baseline, "FILE",
           "compare with an earlier --json report; exit 1 on a modeled regression"),
    OPTION_RANGE(0, "max-regression", OPT_DOUBLE, &max_regression, "PCT",
           "modeled throughput loss allowed against --baseline (default 5)", 0, 100),
    OPTION(0, "trace", OPT_STRING, &trace, "FILE",
           "write a Chrome trace of one more run, a track per core (Perfetto, chrome://tracing)"),
    { 0, "trace-clock", OPT_STRING, &trace_clock, "CLOCK",
      "the trace's time axis: modeled (the default) or host", COMPLETE_VALUES, clock_names, 0, 0 },
    OPTION(0, "hugepages", OPT_FLAG, &hugepages, NULL,
           "say whether input tensors of 2 MiB or more got transparent huge pages"),
    DEVICE_OPTIONS(dc),
    BUILD_DIR_OPTION(dc),
    OPTION(0, "json", OPT_FLAG, &json, NULL, "print every figure as JSON"),
    OPTION('v', "verbose", OPT_FLAG, &verbose, NULL, "show the build steps of a DIR, and the sandbox"),
    OPTIONS_END,
};

const struct command_spec bench_spec = {
    "bench", "[options] LIB.so|DIR OP [ARG...]",
    "Measure the throughput of op OP on the virtual GPSIMD device, on the host and\n"
    "as the device profile's cost model predicts it: warm-up runs, then timed runs;\n"
    "arguments as for neuronop run.",
    options, 2, -1,
    "measure an op's throughput on the virtual device",
    NULL,
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

static const char *const category_names[NOP_COST_CATEGORIES + 1] = {
    "kernel compute", "standard accessor", "streaming accessor", "TCM copies",
    "tensor library", "printf", "other calls", "launch"
};

/* Calls counted per category, over all cores (compute and other: not counted). */
static long long category_calls(const nop_run_result *r, int cat)
{
    long long n = 0;
    for (int i = 0; i < r->ncores; i++) {
        const nop_counters *c = &r->cores[i].counters;
        n += cat == NOP_COST_STD ? c->std_elems
             : cat == NOP_COST_STREAM ? c->stream_elems + c->stream_slow_elems
             : cat == NOP_COST_TCM ? c->tcm_transfers
             : cat == NOP_COST_TENSORLIB ? c->tensorlib_calls
             : cat == NOP_COST_PRINTF ? c->printf_calls : 0;
    }
    return cat == NOP_MODEL_LAUNCH ? 1 : n;
}

static double category_host(const nop_run_result *r, int cat)
{
    double t = 0;
    for (int i = 0; cat < NOP_COST_CATEGORIES && i < r->ncores; i++)
        t += r->cores[i].category_seconds[cat];
    return t;
}

static void print_ms(const char *label, double s)
{
    printf("%s %.3f ms", label, s * 1e3);
}

static void print_human(const char *opname, const nop_profile *p, const nop_bench_result *b,
                        const nop_model *m, bool memcheck)
{
    const nop_run_result *r = &b->fastest;
    printf("%s on %s: %d core%s (%s, %d host thread%s), %ld warm-up and %d timed runs\n",
           opname, nop_profile_name(p), r->ncores, r->ncores == 1 ? "" : "s",
           dc.schedule ? dc.schedule : "parallel", r->threads, r->threads == 1 ? "" : "s",
           warmup, b->runs);
    printf("(%s)\n", what_a_run_is);
    if (memcheck)
        printf("(a memcheck build: every pointer access of the kernel is checked, so the "
               "figures are the instrumented kernel's, not the device's)\n");
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
    printf("modeled device time per run: %.3f us (launch %.0f cycles + slowest core %d: %.0f "
           "cycles, at %.0f MHz)\n", m->seconds * 1e6, m->category_cycles[NOP_MODEL_LAUNCH],
           m->slowest, m->core_cycles[m->slowest], m->seconds > 0 ? m->cycles / m->seconds / 1e6 : 0);
    printf("modeled throughput (iter/sec): %.2f\n", m->throughput);
    double total = 0;
    for (int k = 0; k <= NOP_MODEL_LAUNCH; k++)
        total += m->category_cycles[k];
    printf("(the modeled figures count every access and copy exactly; kernel compute, %.0f%% of "
           "them, scales host time, so it varies with the machine's load)\n",
           total > 0 ? 100 * m->category_cycles[NOP_COST_COMPUTE] / total : 0);
    double host = 0;
    for (int k = 0; k < NOP_COST_CATEGORIES; k++)
        host += category_host(r, k);
    printf("profile by category, all cores, fastest run:\n");
    printf("  %-20s %12s %12s %7s %16s\n", "category", "calls", "host ms", "host %",
           "modeled cycles");
    for (int k = 0; k <= NOP_MODEL_LAUNCH; k++) {
        long long calls = category_calls(r, k);
        double h = category_host(r, k);
        if (k == NOP_COST_COMPUTE || k == NOP_COST_OTHER)
            printf("  %-20s %12s", category_names[k], "-");
        else
            printf("  %-20s %12lld", category_names[k], calls);
        if (k == NOP_MODEL_LAUNCH)
            printf(" %12s %7s", "-", "-");
        else
            printf(" %12.3f %6.1f%%", h * 1e3, host > 0 ? 100 * h / host : 0);
        printf(" %16.0f\n", m->category_cycles[k]);
    }
    printf("per core, fastest run:\n");
    printf("  %4s %10s %10s %10s %9s %9s %10s %6s %9s %14s\n", "core", "std elems", "stream",
           "TCM bytes", "transfers", "streams", "tensorlib", "stack", "host ms",
           "modeled cycles");
    for (int i = 0; i < r->ncores; i++) {
        const nop_core_report *c = &r->cores[i];
        printf("  %4d %10lld %10lld %10lld %9lld %9lld %10lld %6zu %9.3f %14.0f\n", c->id,
               (long long)c->counters.std_elems,
               (long long)(c->counters.stream_elems + c->counters.stream_slow_elems),
               (long long)c->counters.tcm_bytes, (long long)c->counters.tcm_transfers,
               (long long)c->counters.streams_opened, (long long)c->counters.tensorlib_elems,
               c->stack_high_water, c->seconds * 1e3, m->core_cycles[i]);
    }
}

/* The comparison with --baseline, when given. */
typedef struct comparison {
    bool done, regressed;
    nop_baseline old;
    double host_change, model_change;   /* changes in percent */
} comparison;

/* The op's arguments as given (ARG... after LIB and OP), space-separated, into buf. */
static void inputs_of(char **args, int nargs, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 2; i < nargs && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i > 2 ? " " : "", args[i]);
}

/* A baseline measures one op with one input on one device and core count: a comparison
 * with anything else means nothing, so it is refused (what an older report lacks is not
 * checked).  Prints and returns an exit status, or 0. */
static int check_baseline(const char *what, const char *had, const char *has)
{
    if (!had[0] || strcmp(had, has) == 0)
        return 0;
    report_plain_error("'%s' is a baseline %s '%s', not '%s': compare like with like",
                       baseline, what, had, has);
    fprintf(stderr, "make a baseline of this bench with 'neuronop bench ... --json > %s'\n",
            baseline);
    return STATUS_USAGE;
}

/* What --hugepages got: of the input tensors of 2 MiB or more, how many the kernel backed. */
typedef struct hugepage_report {
    int large, granted;
} hugepage_report;

static const char *hugepage_summary(const hugepage_report *h)
{
    if (h->large == 0)
        return "no input tensor is 2 MiB or more; nothing to back";
    if (h->granted == h->large)
        return "granted for every input tensor of 2 MiB or more";
    if (h->granted)
        return "granted for some input tensors of 2 MiB or more, not all";
    return "requested but not granted (see /sys/kernel/mm/transparent_hugepage/enabled)";
}

/* What --trace wrote. */
typedef struct trace_report {
    bool done;
    nop_trace_info info;
} trace_report;

/* Runs the op once more on a device that records, and writes its trace to --trace.  An extra
 * run, because recording slows the runs it watches; its modeled figures use the benchmark's
 * host-speed factor.  Prints errors; returns their exit status. */
static int write_trace(const struct op_call *oc, double host_ns, trace_report *t)
{
    nop_device *dev = NULL;
    nop_run_result r = { 0 };
    nop_error err;
    int rc = device_cli_tracer(&dc, oc->profile, &dev);
    if (rc != 0)
        return rc;
    if (nop_device_run(dev, oc->lib, oc->op, oc->vals, oc->nvals, &r, &err) != 0) {
        rc = report_error(&err);
    } else {
        nop_model m;
        nop_model_run(oc->profile, &r, host_ns, &m);
        bool host = trace_clock && strcmp(trace_clock, clock_names[NOP_TRACE_HOST]) == 0;
        enum nop_trace_clock clock = host ? NOP_TRACE_HOST : NOP_TRACE_MODELED;
        if (nop_trace_save(&r, oc->profile, &m, clock, oc->name, trace, &t->info, &err) != 0)
            rc = report_error(&err);
        t->done = rc == 0;
    }
    nop_run_result_clear(&r);
    nop_device_free(dev);
    return rc;
}

static void print_json(const char *library, const char *opname, const char *inputs,
                       const nop_profile *p, bool memcheck, const nop_bench_result *b,
                       const nop_model *m, double host_ns, const comparison *cmp,
                       const hugepage_report *hp, const trace_report *tr)
{
    const nop_run_result *r = &b->fastest;
    printf("{\"library\": ");
    print_json_string(stdout, library);
    printf(", \"op\": ");
    print_json_string(stdout, opname);
    printf(", \"inputs\": ");
    print_json_string(stdout, inputs);
    printf(", \"device\": ");
    print_json_string(stdout, nop_profile_name(p));
    printf(", \"memcheck\": %s, \"cores\": %d, \"threads\": %d, \"warmup\": %ld, "
           "\"runs\": %d,\n", memcheck ? "true" : "false", r->ncores, r->threads, warmup,
           b->runs);
    printf(" \"host\": {\"mean\": %.9f, \"sd\": %.9f, \"median\": %.9f, \"min\": %.9f, "
           "\"max\": %.9f, \"p90\": %.9f, \"p99\": %.9f, \"throughput\": %.6f},\n", b->mean,
           b->sd, b->median, b->min, b->max, b->p90, b->p99, 1.0 / b->mean);
    printf(" \"modeled\": {\"cycles\": %.1f, \"seconds\": %.12f, \"throughput\": %.6f, "
           "\"slowest_core\": %d, \"cycles_per_host_ns\": %.6f, "
           "\"host_ns_per_reference_element\": %.6f, \"categories\": {", m->cycles, m->seconds,
           m->throughput, m->slowest, m->cycles_per_host_ns, host_ns);
    static const char *const keys[] = { "compute", "standard_accessor", "streaming_accessor",
                                         "tcm", "tensor_library", "printf", "other", "launch" };
    for (int k = 0; k <= NOP_MODEL_LAUNCH; k++)
        printf("%s\"%s\": %.1f", k ? ", " : "", keys[k], m->category_cycles[k]);
    printf("}},\n");
    if (cmp->done)
        printf(" \"baseline\": {\"host_throughput\": %.6f, \"modeled_throughput\": %.6f, "
               "\"host_change_percent\": %.3f, \"modeled_change_percent\": %.3f, "
               "\"regressed\": %s},\n", cmp->old.host_throughput, cmp->old.modeled_throughput,
               cmp->host_change,
               cmp->model_change, cmp->regressed ? "true" : "false");
    if (hugepages)
        printf(" \"hugepages\": {\"large_tensors\": %d, \"granted\": %d},\n", hp->large,
               hp->granted);
    if (tr->done) {
        printf(" \"trace\": {\"file\": ");
        print_json_string(stdout, trace);
        printf(", \"clock\": \"%s\", \"spans\": %lld, \"drawn\": %lld},\n",
               trace_clock ? trace_clock : "modeled", (long long)tr->info.spans,
               (long long)tr->info.drawn);
    }
    printf(" \"per_core\": [");
    for (int i = 0; i < r->ncores; i++) {
        const nop_core_report *c = &r->cores[i];
        printf("%s\n  {\"id\": %d, \"modeled_cycles\": %.1f, \"seconds\": %.9f, "
               "\"compute_seconds\": %.9f", i ? "," : "", c->id, m->core_cycles[i], c->seconds,
               c->category_seconds[NOP_COST_COMPUTE]);
        print_json_core_counters(c);
        printf("}");
    }
    printf("\n]}\n");
}

/* The checks of option values that parse_options cannot make.  Prints; returns 0 or 2. */
static int check_options(void)
{
    /* each one's range, and --trace-clock's words, are the parser's */
    if (seconds > 0 && iters > 0)
        return command_usage_error(&bench_spec, "give --iters or --time, not both");
    if (trace_clock && !trace)
        return command_usage_error(&bench_spec, "--trace-clock '%s' needs --trace FILE",
                                   trace_clock);
    if (max_regression >= 0 && !baseline)
        return command_usage_error(&bench_spec, "--max-regression %g needs --baseline FILE",
                                   max_regression);
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    char **args;
    int nargs;
    dc.timeout = 0;
    int rc = parse_options(&bench_spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    struct op_call oc = { 0 };
    nop_bench_result b = { 0 };
    if ((rc = check_options()) != 0 || (rc = device_cli_checks(&dc)) != 0 ||
        (trace && (rc = check_output_file(trace, "a .json file")) != 0))
        goto out;
    nop_error err;
    comparison cmp = { 0 };
    if (baseline && nop_bench_baseline_load(baseline, &cmp.old, &err)) {
        rc = report_error(&err);
        goto out;
    }
    double host_ns;
    if (nop_host_speed(NULL, &host_ns, &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    dc.profile = true;
    if ((rc = op_call_open(&oc, &dc, args, nargs, verbose)) != 0)
        goto out;
    char inputs[sizeof cmp.old.inputs];
    inputs_of(args, nargs, inputs, sizeof inputs);
    if (baseline &&
        ((rc = check_baseline("of library", cmp.old.library, nop_library_name(oc.lib))) != 0 ||
         (rc = check_baseline("of op", cmp.old.op, oc.name)) != 0 ||
         (rc = check_baseline("on device", cmp.old.device,
                              nop_profile_name(oc.profile))) != 0 ||
         (rc = check_baseline("with inputs", cmp.old.inputs, inputs)) != 0))
        goto out;
    char had[16], has[16];   /* the cores the run will use, known before it starts */
    int cores = nop_library_multicore(oc.lib) ? (dc.cores ? (int)dc.cores
                                                 : nop_profile_cores(oc.profile)) : 1;
    snprintf(had, sizeof had, "%d", cmp.old.cores);
    snprintf(has, sizeof has, "%d", cores);
    if (baseline && cmp.old.cores && (rc = check_baseline("on cores", had, has)) != 0)
        goto out;
    const char *onoff[] = { "off", "on" };   /* memcheck's checks slow every access */
    if (baseline && cmp.old.memcheck >= 0 &&
        (rc = check_baseline("with memcheck", onoff[cmp.old.memcheck],
                             onoff[nop_library_memcheck(oc.lib)])) != 0)
        goto out;
    hugepage_report hp = { 0, 0 };
    for (int i = 0; hugepages && i < oc.nvals; i++) {
        enum nop_hugepages state;
        if (!oc.tensors[i])
            continue;   /* a scalar argument */
        if (nop_tensor_hugepages(oc.tensors[i], &state, &err) != 0) {
            rc = report_error(&err);
            goto out;
        }
        hp.large += state != NOP_HUGEPAGES_SMALL;
        hp.granted += state == NOP_HUGEPAGES_GRANTED;
    }
    bool shown = false;
    nop_bench_opts o = { (int)warmup, seconds > 0 ? 0 : iters > 0 ? (int)iters : 100, seconds,
                         progress, &shown };
    int brc = nop_bench(oc.dev, oc.lib, oc.op, oc.vals, oc.nvals, &o, &b, &err);
    if (shown)
        fprintf(stderr, "\r%60s\r", "");
    if (brc != 0) {
        rc = report_error(&err);
        goto out;
    }
    nop_model m;
    nop_model_run(oc.profile, &b.fastest, host_ns, &m);
    if (baseline) {
        cmp.done = true;
        cmp.host_change = 100 * (1.0 / b.mean - cmp.old.host_throughput) /
                          cmp.old.host_throughput;
        cmp.model_change = 100 * (m.throughput - cmp.old.modeled_throughput) /
                           cmp.old.modeled_throughput;
        if (max_regression < 0)
            max_regression = 5;
        cmp.regressed = cmp.model_change < -max_regression;
    }
    trace_report tr = { false, { 0, 0 } };
    if (trace && (rc = write_trace(&oc, host_ns, &tr)) != 0)
        goto out;
    if (json)
        print_json(nop_library_name(oc.lib), oc.name, inputs, oc.profile,
                   nop_library_memcheck(oc.lib), &b, &m, host_ns, &cmp, &hp, &tr);
    else
        print_human(oc.display, oc.profile, &b, &m, nop_library_memcheck(oc.lib));
    if (hugepages && !json)
        printf("huge pages: %s\n", hugepage_summary(&hp));
    if (tr.done && !json)
        printf("trace: '%s' (%s clock): %lld spans%s\n", trace,
               trace_clock ? trace_clock : "modeled", (long long)tr.info.spans,
               tr.info.drawn < tr.info.spans ? "; past 2000 on a core they are only counted, "
                                              "in the core's kernel span" : "");
    if (cmp.done && !json)
        printf("against '%s': modeled throughput %.2f -> %.2f iter/sec (%+.1f%%), host %.2f "
               "-> %.2f iter/sec (%+.1f%%)\n", baseline, cmp.old.modeled_throughput,
               m.throughput, cmp.model_change, cmp.old.host_throughput, 1.0 / b.mean,
               cmp.host_change);
    flush_stdout();   /* results first, then any warning about them */
    /* hyperfine's rule of thumb: a spread this large means the machine was busy */
    if (b.runs > 2 && (b.sd > 0.1 * b.mean || b.max > 3 * b.median))
        report_warning("the runs' times spread widely (sd %.0f%% of the mean, max %.1fx the "
                       "median): other work on this machine disturbed them; close it or raise "
                       "--iters", 100 * b.sd / b.mean, b.max / b.median);
    if (cmp.regressed) {
        report_plain_error("modeled throughput fell %.1f%% against '%s', more than "
                           "--max-regression %g%%", -cmp.model_change, baseline, max_regression);
        rc = STATUS_FAIL;
    }
out:
    nop_bench_result_clear(&b);
    op_call_close(&oc);
    free_option_lists(&bench_spec);
    free(args);
    return rc;
}
