/*
 * cmd-run.c - `neuronop run LIB|DIR OP ARG...`: runs one op on the virtual device and shows
 * its output, the kernel's printf output and each core's stack use; saves (-o) or checks
 * (--expect) the output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static struct device_cli dc = { .spec = &run_spec };
static const char *output, *expect;
static double rel_tol = -1, abs_tol = -1;
static bool json, verbose;

static const struct option_spec options[] = {
    OPTION('o', "output", OPT_STRING, &output, "FILE", "save the output as a .npy file"),
    OPTION(0, "expect", OPT_STRING, &expect, "FILE", "compare the output with a reference .npy"),
    OPTION_RANGE(0, "rtol", OPT_DOUBLE, &rel_tol, "R",
                 "relative tolerance for --expect (default by dtype)", 0, 1e9),
    OPTION_RANGE(0, "atol", OPT_DOUBLE, &abs_tol, "A",
                 "absolute tolerance for --expect (default by dtype)", 0, 1e9),
    DEVICE_OPTIONS(dc),
    BUILD_DIR_OPTION(dc),
    OPTION(0, "json", OPT_FLAG, &json, NULL, "print the result as JSON"),
    OPTION('v', "verbose", OPT_FLAG, &verbose, NULL, "show the build steps of a DIR, and the sandbox"),
    OPTIONS_END,
};

const struct command_spec run_spec = {
    "run", "[options] LIB.so|DIR OP [ARG...]",
    "Run op OP of an op library on the virtual GPSIMD device.  Each ARG matches\n"
    "the op's signature: a number for scalar, double and int64; a .npy file or a\n"
    "generator for a tensor (randn:32x4096, rand:4x4:f32, zeros:8, ones:8,\n"
    "full:4x4:2.5, arange:10:i64).  A DIR is built first.",
    options, 2, -1,
    "run an op on the virtual GPSIMD device",
    NULL,
};

static bool floating(const nop_tensor *t)
{
    enum nop_dtype d = nop_tensor_dtype(t);
    return d == NOP_F32 || d == NOP_BF16 || d == NOP_F16;
}

/* Prints element i of t: six significant digits of a floating dtype, every digit of an
 * integer one (1410065408, not 1.41007e+09; an int64 exactly, past 2^53 too). */
static void print_element(const nop_tensor *t, int64_t i)
{
    if (floating(t))
        printf("%.6g", nop_tensor_get(t, i));
    else
        printf("%lld", (long long)nop_tensor_get_int(t, i));
}

static void print_values(const nop_tensor *t)
{
    int64_t n = nop_tensor_numel(t);
    printf("  values:");
    for (int64_t i = 0; i < n; i++) {
        if (n > 10 && i == 5) {
            printf(" ...");
            i = n - 4;
        }
        putchar(' ');
        print_element(t, i);
    }
    printf("\n");
}

static void print_human(const char *opname, const nop_run_result *res)
{
    int threads = res->threads;
    char shape[128];
    nop_tensor_shape_str(res->output, shape, sizeof shape);
    nop_tensor_stats st;
    nop_tensor_stats_of(res->output, &st);
    printf("%s: ok on %d core%s (%s, %d host thread%s) in %.3f ms\n", opname, res->ncores,
           res->ncores == 1 ? "" : "s", dc.schedule ? dc.schedule : "parallel", threads,
           threads == 1 ? "" : "s", res->seconds * 1e3);
    /* an integer output's extremes as integers (exact to 2^53: stats are doubles) */
    const char *f = floating(res->output) || !isfinite(st.min) ? "%.6g" : "%.0f";
    printf("output: %s %s", shape, nop_dtype_name(nop_tensor_dtype(res->output)));
    if (nop_tensor_numel(res->output) == 0) {   /* no extremes (a new user read "min nan") */
        printf("  (no elements)\n");
        return;
    }
    printf("  min ");
    printf(f, st.min);
    printf("  max ");
    printf(f, st.max);
    printf("  mean %.6g", st.mean);
    if (st.nonfinite)
        printf("  (%lld not finite)", (long long)st.nonfinite);
    printf("\n");
    print_values(res->output);
}

static void print_stacks(const nop_run_result *res)
{
    /* the high-water marks count the runtime's calls, which have room beyond STACK_SIZE:
     * said here, so that a mark past STACK_SIZE in a run that passed is not a puzzle */
    printf("stack high-water (bytes; STACK_SIZE %zu, and %zu for runtime calls):",
           res->stack_size, nop_stack_runtime_bytes());
    for (int i = 0; i < res->ncores; i++)
        printf("%s core %d: %zu", i ? "," : "", res->cores[i].id,
               res->cores[i].stack_high_water);
    printf("\n");
}

static void print_printf(const nop_run_result *res)
{
    if (!res->printf_text || !res->printf_text[0])
        return;
    printf("kernel printf output:\n");
    if (res->printf_lost)
        printf("(older output was overwritten: the device's printf buffer is full)\n");
    fputs(res->printf_text, stdout);
    size_t n = strlen(res->printf_text);
    if (n && res->printf_text[n - 1] != '\n')
        printf("\n");
}

static void json_number(double v)
{
    if (isfinite(v))
        printf("%.9g", v);
    else
        printf("null");
}

/* failed: the run's error, or NULL when it went well (the reason was on standard error
 * only, which a script reading the JSON does not see: a new user's find). */
static void print_json(const char *opname, const nop_run_result *res, const nop_error *failed,
                       const nop_compare *cmp, bool ok)
{
    printf("{\"op\": ");
    print_json_string(stdout, opname);
    printf(", \"ok\": %s, \"seconds\": %.9f, \"stack_size\": %zu", ok ? "true" : "false",
           res->seconds, res->stack_size);
    if (failed) {
        printf(", \"error\": {\"where\": ");
        print_json_string(stdout, failed->diag.where);
        printf(", \"message\": ");
        print_json_string(stdout, failed->diag.msg);
        printf(", \"detail\": ");
        print_json_string(stdout, failed->diag.detail);
        printf("}");
    }
    if (res->output) {
        nop_tensor_stats st;
        nop_tensor_stats_of(res->output, &st);
        printf(", \"output\": {\"dtype\": \"%s\", \"shape\": [",
               nop_dtype_name(nop_tensor_dtype(res->output)));
        for (int d = 0; d < nop_tensor_ndim(res->output); d++)
            printf("%s%lld", d ? ", " : "", (long long)nop_tensor_sizes(res->output)[d]);
        printf("], \"min\": ");
        json_number(st.min);
        printf(", \"max\": ");
        json_number(st.max);
        printf(", \"mean\": ");
        json_number(st.mean);
        printf(", \"nonfinite\": %lld}", (long long)st.nonfinite);
    }
    if (cmp) {   /* an infinite error is no JSON number: null, as for the stats */
        printf(", \"mismatches\": %lld, \"max_abs_error\": ", (long long)cmp->mismatches);
        json_number(cmp->max_abs_error);
    }
    printf(", \"printf\": ");
    print_json_string(stdout, res->printf_text ? res->printf_text : "");
    printf(", \"printf_lost\": %s, \"cores\": [", res->printf_lost ? "true" : "false");
    for (int i = 0; i < res->ncores; i++) {
        const nop_core_report *c = &res->cores[i];
        printf("%s{\"id\": %d, \"seconds\": %.9f", i ? ", " : "", c->id, c->seconds);
        print_json_core_counters(c);
        printf("}");
    }
    printf("]}\n");
}

/* Compares with --expect's tensor, want; prints the verdict on stderr.  Returns 0 when
 * it matches. */
static int compare(const nop_tensor *out, const nop_tensor *want, nop_compare *cmp)
{
    double r, a;
    nop_default_tolerances(nop_tensor_dtype(want), &r, &a);
    if (rel_tol >= 0)
        r = rel_tol;
    if (abs_tol >= 0)
        a = abs_tol;
    nop_tensor_compare(out, want, r, a, cmp);
    int rc = 0;
    if (cmp->mismatches) {
        rc = STATUS_FAIL;
        if (cmp->why[0])
            report_plain_error("output differs from '%s': %s", expect, cmp->why);
        if (cmp->nworst)
            report_plain_error("output differs from '%s': %lld of %lld elements beyond rtol=%g "
                               "atol=%g", expect, (long long)cmp->mismatches,
                               (long long)nop_tensor_numel(want), r, a);
        for (int i = 0; i < cmp->nworst; i++) {
            char idx[128];
            nop_tensor_index_str(want, cmp->worst[i].index, idx, sizeof idx);
            fprintf(stderr, "  at %s: got %.9g, expected %.9g (error %.3g)\n", idx,
                    cmp->worst[i].got, cmp->worst[i].want, cmp->worst[i].error);
        }
    } else if (!json) {
        printf("matches '%s' (rtol=%g, atol=%g; largest error %.3g)\n", expect, r, a,
               cmp->max_abs_error);
    }
    return rc;
}

int cmd_run(int argc, char **argv)
{
    char **args;
    int nargs;
    dc.timeout = 0;
    int rc = parse_options(&run_spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    if (!expect && (rel_tol >= 0 || abs_tol >= 0)) {   /* a tolerance with nothing to judge */
        rc = command_usage_error(&run_spec, "--%s needs --expect FILE",
                                 rel_tol >= 0 ? "rtol" : "atol");
    }
    if (rc == 0)   /* before the library is built: a bad option builds nothing */
        rc = device_cli_checks(&dc);
    if (rc == 0 && output)
        rc = check_output_file(output, "a .npy file");
    if (rc != 0) {
        free_option_lists(&run_spec);
        free(args);
        return rc;
    }
    struct op_call oc;
    nop_run_result res = { 0 };
    nop_tensor *want = NULL;
    nop_error err;
    if ((rc = op_call_open(&oc, &dc, args, nargs, verbose)) != 0)
        goto out;
    /* a missing or broken --expect file is an input error before anything runs */
    if (expect && nop_tensor_load_npy(&want, expect, &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    report_reset_counts();
    report_hold(nop_library_multicore(oc.lib));   /* one line for a message every core gave */
    bool ok = nop_device_run(oc.dev, oc.lib, oc.op, oc.vals, oc.nvals, &res, &err) == 0;
    if (!ok)
        rc = report_error(&err);
    report_release();
    const char *opname = oc.display;   /* ns::OP for a C++ library */
    if (!json) {
        if (ok)
            print_human(opname, &res);
        print_printf(&res);
        if (res.ncores)
            print_stacks(&res);
    }
    flush_stdout();
    /* the summary counts what the device reported; what follows (the comparison, saving
     * the output) is the host's and reported on its own */
    report_summary("device checks");
    nop_compare cmp;
    bool compared = ok && want;
    if (compared)
        rc = compare(res.output, want, &cmp);
    bool saved = false, unsaved = false;
    if (ok && output && rc == 0 && nop_tensor_save_npy(res.output, output, &err) != 0) {
        rc = report_error(&err);
        unsaved = true;
    } else {
        saved = ok && output && rc == 0;
    }
    if (json)   /* last, so its "ok" is the whole run's, -o included (and its error) */
        print_json(args[1], &res, !ok || unsaved ? &err : NULL, compared ? &cmp : NULL,
                   ok && rc == 0);
    else if (saved)
        printf("saved '%s'\n", output);
out:
    nop_tensor_free(want);
    nop_run_result_clear(&res);
    op_call_close(&oc);
    free_option_lists(&run_spec);
    free(args);
    return rc;
}
