/*
 * cmd-test.c - `neuronop test [DIR|MANIFEST]`: runs the test cases of a manifest under every
 * legal execution of the device and reports each.
 *
 * Real cores never synchronise, so any order of them is a legal execution, and a multicore
 * kernel must give one answer on every core count its test lists.  Each sub-case (one
 * combination of argument values) runs on each core count under the sequential, reversed and
 * parallel schedules and --schedules shuffled ones.  It fails when a device rule breaks, when
 * two executions disagree ("depends on core order" / "core count") or when the first differs
 * from the expected output beyond the tolerances.  Results are collected first and then
 * printed as lines, JSON (--json) and JUnit XML (--junit).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static struct device_cli dc;
static const char *pattern, *shard, *junit;
static long shuffles = 2;
static bool verbose, json;

static const struct option_spec options[] = {
    { 'k', "filter", OPT_STRING, &pattern, "PATTERN",
      "run only the cases whose name contains PATTERN" },
    { 0, "shard", OPT_STRING, &shard, "I/N", "run the I-th of N deterministic slices" },
    { 0, "schedules", OPT_INT, &shuffles, "N", "shuffled schedules per run (default 2)" },
    { 0, "junit", OPT_STRING, &junit, "FILE", "also write JUnit XML for CI dashboards" },
    { 0, "json", OPT_FLAG, &json, NULL, "print the results as JSON" },
    { 0, "device", OPT_STRING, &dc.device, "NAME", "device profile (default trn1)" },
    { 'j', "threads", OPT_INT, &dc.threads, "N", "host threads (default: one per CPU)" },
    { 0, "seed", OPT_INT, &dc.seed, "N", "seed for generators and shuffles (default 0)" },
    { 0, "timeout", OPT_DOUBLE, &dc.timeout, "SECONDS", "stop a kernel after this long" },
    DEVICE_CHECK_OPTIONS(dc),
    { 'v', "verbose", OPT_FLAG, &verbose, NULL, "show the build steps" },
    { 0, NULL, 0, NULL, NULL, NULL },
};

static const struct command_spec spec = {
    "test", "[options] [DIR|MANIFEST]",
    "Run the test cases of a manifest's 'tests' section under every core order and\n"
    "count, and report each case; exit 1 if any failed.",
    options, 0, 1,
};

enum status { PASSED, FAILED, ERRORED, SKIPPED };

/* The outcome of one sub-case. */
typedef struct result {
    char label[512];
    const char *op;
    enum status status;
    char message[2048];         /* why it failed: first line a summary */
    int executions;
    double seconds;
} result;

typedef struct results {
    result *v;
    int n, cap;
} results;

static result *add_result(results *r)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 16;
        result *v = realloc(r->v, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        r->v = v;
        r->cap = cap;
    }
    result *x = &r->v[r->n++];
    memset(x, 0, sizeof *x);
    return x;
}

static void note(result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(result *res, const char *fmt, ...)
{
    size_t used = strlen(res->message);
    if (used && used + 1 < sizeof res->message)
        res->message[used++] = '\n', res->message[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message + used, sizeof res->message - used, fmt, ap);
    va_end(ap);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One execution: a core count and a schedule. */
typedef struct execution {
    int cores;                 /* 0: the profile's */
    enum nop_schedule schedule;
    long seed;
    char label[64];
} execution;

/* The executions of a case: each core count under each schedule. */
static int plan(const nop_testinfo *t, execution *ex, int max)
{
    static const char *const fixed[] = { "sequential", "reversed", "parallel" };
    static const enum nop_schedule kinds[] = { NOP_SCHED_SEQUENTIAL, NOP_SCHED_REVERSED,
                                               NOP_SCHED_PARALLEL };
    const int one = 0;
    const int *counts = t->ncores ? t->cores : &one;
    int n = 0;
    for (int c = 0; c < (t->ncores ? t->ncores : 1); c++) {
        for (int s = 0; s < 3 + (int)shuffles && n < max; s++) {
            execution *e = &ex[n++];
            e->cores = counts[c];
            e->schedule = s < 3 ? kinds[s] : NOP_SCHED_SHUFFLE;
            e->seed = dc.seed + s - 2;   /* shuffles use seed+1, seed+2, ... */
            int k = s < 3 ? snprintf(e->label, sizeof e->label, "%s", fixed[s])
                          : snprintf(e->label, sizeof e->label, "shuffle (seed %ld)", e->seed);
            if (counts[c])
                snprintf(e->label + k, sizeof e->label - (size_t)k, " on %d core%s", counts[c],
                         counts[c] == 1 ? "" : "s");
        }
    }
    return n;
}

/* The sub-case's label: name[v1, v2] when some argument has alternatives. */
static void case_label(const nop_testinfo *t, const int *pick, char *buf, size_t size)
{
    bool subs = false;
    for (int a = 0; a < t->nargs; a++)
        subs |= t->nalts[a] > 1;
    size_t used = (size_t)snprintf(buf, size, "%s", t->name);
    if (!subs || used >= size)
        return;
    used += (size_t)snprintf(buf + used, size - used, "[");
    for (int a = 0; a < t->nargs && used < size; a++) {
        const char *v = t->alts[a][pick[a]];
        const char *slash = strrchr(v, '/');
        used += (size_t)snprintf(buf + used, size - used, "%s%s", a ? ", " : "",
                                 slash ? slash + 1 : v);
    }
    if (used < size)
        snprintf(buf + used, size - used, "]");
}

/* Runs one execution.  *out receives the output (caller frees); a failure is reported on
 * stderr and noted in res.  Returns 0 when the op ran. */
static int execute(const nop_library *lib, const nop_profile *profile, const execution *e,
                   int opi, const nop_value *vals, int nargs, nop_tensor **out, result *res)
{
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .threads = (int)dc.threads, .cores = e->cores,
                          .schedule = e->schedule, .seed = (uint64_t)e->seed,
                          .timeout = dc.timeout, .disabled_checks = dc.disabled,
                          .diag = report_sink };
    if (nop_device_new(&dev, profile, &o, &err) != 0) {
        report_error(&err);
        note(res, "cannot make the device: %s", err.diag.msg);
        return -1;
    }
    nop_run_result run;
    int rc = nop_device_run(dev, lib, opi, vals, nargs, &run, &err);
    if (rc != 0) {
        report_error(&err);
        note(res, "a device rule was broken under %s", e->label);
        note(res, "%s%s%s", err.diag.where, err.diag.where[0] ? ": " : "", err.diag.msg);
    } else {
        *out = run.output;
        run.output = NULL;
    }
    nop_run_result_clear(&run);
    nop_device_free(dev);
    return rc;
}

/* Compares a result with what it must equal; notes the worst elements in res. */
static bool same(const nop_tensor *got, const nop_tensor *want, double rtol, double atol,
                 result *res, const char *what)
{
    nop_compare cmp;
    nop_tensor_compare(got, want, rtol, atol, &cmp);
    if (!cmp.mismatches)
        return true;
    note(res, "%s in %lld element%s%s%s", what, (long long)cmp.mismatches,
         cmp.mismatches == 1 ? "" : "s", cmp.why[0] ? "; " : "", cmp.why);
    for (int w = 0; w < cmp.nworst && w < 3; w++)
        note(res, "  element %lld: got %.9g, expected %.9g", (long long)cmp.worst[w].index,
             cmp.worst[w].got, cmp.worst[w].want);
    return false;
}

/* Compares the kernel's output with its reference function's, run once on the host. */
static void against_reference(const nop_library *lib, const nop_profile *profile,
                              const nop_testinfo *t, int opi, const nop_value *vals,
                              const nop_tensor *got, result *res)
{
    (void)opi;
    int ref = nop_library_find_reference(lib, t->reference);
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .timeout = dc.timeout, .diag = report_sink };
    if (ref < 0 || nop_device_new(&dev, profile, &o, &err) != 0) {
        res->status = ERRORED;
        note(res, "cannot run reference function '%s'", t->reference);
        return;
    }
    nop_run_result run;
    if (nop_device_run_reference(dev, lib, ref, vals, t->nargs, &run, &err) != 0) {
        report_error(&err);
        res->status = ERRORED;
        note(res, "its reference function '%s' failed: %s", t->reference, err.diag.msg);
    } else {
        double r = t->rtol, a = t->atol, dr, da;
        default_tolerances(nop_tensor_dtype(run.output), &dr, &da);
        r = r < 0 ? dr : r;
        a = a < 0 ? da : a;
        char what[512];
        snprintf(what, sizeof what, "the output differs from reference '%s' beyond rtol=%g "
                 "atol=%g", t->reference, r, a);
        if (!same(got, run.output, r, a, res, what))
            res->status = FAILED;
    }
    nop_run_result_clear(&run);
    nop_device_free(dev);
}

/* Runs one sub-case on every execution and fills res. */
static void run_case(const nop_library *lib, const nop_profile *profile, const nop_testinfo *t,
                     const int *pick, result *res)
{
    case_label(t, pick, res->label, sizeof res->label);
    res->op = t->op;
    double t0 = now();
    const char *argv[NOP_MAX_ARGS];
    for (int a = 0; a < t->nargs; a++)
        argv[a] = t->alts[a][pick[a]];
    int opi;
    nop_value *vals;
    nop_tensor **tensors;
    fflush(stdout);   /* keep earlier case lines before this case's stderr in a log */
    if (parse_op_args(lib, t->op, t->nargs, (char **)argv, (uint64_t)dc.seed, &opi, &vals,
                      &tensors) != 0) {
        res->status = ERRORED;
        note(res, "its arguments cannot be made (see the message above)");
        free_op_args(vals, tensors, t->nargs);
        res->seconds = now() - t0;
        return;
    }
    execution ex[16 * 40];
    int nex = plan(t, ex, (int)(sizeof ex / sizeof ex[0]));
    nop_tensor *first = NULL;
    int first_ex = -1;
    res->status = PASSED;
    for (int i = 0; i < nex && res->status == PASSED; i++) {
        nop_tensor *out = NULL;
        res->executions++;
        if (execute(lib, profile, &ex[i], opi, vals, t->nargs, &out, res) != 0) {
            res->status = FAILED;
            break;
        }
        if (!first) {
            first = out;
            first_ex = i;
            continue;
        }
        char what[256];
        snprintf(what, sizeof what, "the result depends on core %s: %s and %s differ",
                 ex[i].cores != ex[first_ex].cores ? "count" : "order", ex[first_ex].label,
                 ex[i].label);
        if (!same(out, first, 0, 0, res, what))
            res->status = FAILED;
        nop_tensor_free(out);
    }
    if (res->status == PASSED && t->reference)
        against_reference(lib, profile, t, opi, vals, first, res);
    if (res->status == PASSED && t->expect) {
        nop_tensor *want;
        nop_error err;
        if (nop_tensor_load_npy(&want, t->expect, &err) != 0) {
            report_error(&err);
            res->status = ERRORED;
            note(res, "cannot read its expected output '%s'", t->expect);
        } else {
            double r = t->rtol, a = t->atol, dr, da;
            default_tolerances(nop_tensor_dtype(want), &dr, &da);
            r = r < 0 ? dr : r;
            a = a < 0 ? da : a;
            char what[1200];
            snprintf(what, sizeof what, "the output differs from '%s' beyond rtol=%g atol=%g",
                     t->expect, r, a);
            if (!same(first, want, r, a, res, what))
                res->status = FAILED;
            nop_tensor_free(want);
        }
    }
    res->seconds = now() - t0;
    nop_tensor_free(first);
    free_op_args(vals, tensors, t->nargs);
}

/* ---- reporting -------------------------------------------------------------------------- */

static void print_line(const result *r)
{
    static const char *const words[] = { "ok   ", "FAIL ", "ERROR", "skip " };
    if (r->status == PASSED) {
        printf("ok    %s (%d execution%s, %.1f ms)\n", r->label, r->executions,
               r->executions == 1 ? "" : "s", r->seconds * 1e3);
    } else if (r->status != SKIPPED) {
        const char *nl = strchr(r->message, '\n');
        printf("%s %s: %.*s (%.1f ms)\n", words[r->status], r->label,
               nl ? (int)(nl - r->message) : (int)strlen(r->message), r->message,
               r->seconds * 1e3);
        for (const char *p = nl; p && *p; p = strchr(p + 1, '\n')) {
            const char *end = strchr(p + 1, '\n');
            printf("      %.*s\n", end ? (int)(end - p - 1) : (int)strlen(p + 1), p + 1);
        }
    }
    fflush(stdout);
}

static void print_json(const char *library, const results *rs, int counts[4])
{
    static const char *const words[] = { "passed", "failed", "error", "skipped" };
    printf("{\"library\": ");
    print_json_string(stdout, library);
    printf(", \"passed\": %d, \"failed\": %d, \"skipped\": %d, \"cases\": [", counts[PASSED],
           counts[FAILED] + counts[ERRORED], counts[SKIPPED]);
    for (int i = 0; i < rs->n; i++) {
        const result *r = &rs->v[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        print_json_string(stdout, r->label);
        printf(", \"op\": ");
        print_json_string(stdout, r->op ? r->op : "");
        printf(", \"status\": \"%s\", \"executions\": %d, \"seconds\": %.6f, \"message\": ",
               words[r->status], r->executions, r->seconds);
        print_json_string(stdout, r->message);
        printf("}");
    }
    printf("\n]}\n");
}

static void xml_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* JUnit XML (the Ant/Jenkins structure CI dashboards read), written through a temporary file
 * and rename(2). */
static int write_junit(const char *path, const char *library, const results *rs,
                       int counts[4], double seconds)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
        return report_nomem();
    FILE *f = fopen(tmp, "w");
    if (!f) {
        report_plain_error("cannot write '%s': %s", path, strerror(errno));
        free(tmp);
        return STATUS_USAGE;
    }
    int total = counts[PASSED] + counts[FAILED] + counts[ERRORED] + counts[SKIPPED];
    char stamp[32];
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", gmtime(&t));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"neuronop test\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
            "time=\"%.6f\">\n", total, counts[FAILED], counts[ERRORED], seconds);
    fprintf(f, "  <testsuite name=\"");
    xml_str(f, library);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\" "
            "timestamp=\"%s\">\n", total, counts[FAILED], counts[ERRORED], counts[SKIPPED],
            seconds, stamp);
    for (int i = 0; i < rs->n; i++) {
        const result *r = &rs->v[i];
        fprintf(f, "    <testcase classname=\"");
        xml_str(f, library);
        fprintf(f, ".");
        xml_str(f, r->op ? r->op : "");
        fprintf(f, "\" name=\"");
        xml_str(f, r->label);
        fprintf(f, "\" time=\"%.6f\"", r->seconds);
        if (r->status == PASSED) {
            fprintf(f, "/>\n");
            continue;
        }
        fprintf(f, ">\n");
        if (r->status == SKIPPED) {
            fprintf(f, "      <skipped/>\n");
        } else {
            const char *tag = r->status == FAILED ? "failure" : "error";
            const char *nl = strchr(r->message, '\n');
            char first[512];
            snprintf(first, sizeof first, "%.*s", nl ? (int)(nl - r->message) : 511, r->message);
            fprintf(f, "      <%s message=\"", tag);
            xml_str(f, first);
            fprintf(f, "\">");
            xml_str(f, r->message);
            fprintf(f, "</%s>\n", tag);
        }
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok && rename(tmp, path) == 0;
    if (!ok) {
        report_plain_error("cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : STATUS_USAGE;
}

/* "I/N" with 1 <= I <= N; -1 for anything else. */
static int parse_shard(const char *s, long *i, long *n)
{
    char *end;
    *i = strtol(s, &end, 10);
    if (end == s || *end != '/')
        return -1;
    const char *rest = end + 1;
    *n = strtol(rest, &end, 10);
    return end == rest || *end || *n < 1 || *i < 1 || *i > *n ? -1 : 0;
}

int cmd_test(int argc, char **argv)
{
    char **args;
    int nargs;
    dc.timeout = 0;
    int rc = parse_options(&spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    const char *target = nargs ? args[0] : ".";
    nop_error err;
    nop_manifest *m = NULL;
    nop_library *lib = NULL;
    nop_profile *profile = NULL;
    results rs = { 0 };
    int counts[4] = { 0 };
    long shard_i = 1, shard_n = 1;
    double t0 = now();
    if (shuffles < 0 || shuffles > 37) {
        report_plain_error("--schedules takes 0 to 37 shuffled schedules");
        rc = STATUS_USAGE;
        goto out;
    }
    if (shard && parse_shard(shard, &shard_i, &shard_n) != 0) {
        report_plain_error("--shard takes I/N with 1 <= I <= N, like 2/4, not '%s'", shard);
        rc = STATUS_USAGE;
        goto out;
    }
    if (nop_manifest_load(&m, target, &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    if ((rc = open_target(target, verbose, dc.memcheck, &lib)) != 0 || (rc = device_cli_checks(&dc)) != 0)
        goto out;
    if (nop_profile_load(&profile, dc.device ? dc.device : "trn1", share_dir(), &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    if (nop_manifest_test_count(m) == 0)
        report_warning("'%s' declares no tests; add a 'tests' section (see neuronop.yaml(5))",
                       nop_manifest_path(m));
    for (int i = 0; i < nop_manifest_test_count(m); i++) {
        nop_testinfo t;
        nop_manifest_test(m, i, &t);
        bool selected = (!pattern || strstr(t.name, pattern)) && i % shard_n == shard_i - 1;
        /* every combination of the arguments' alternatives, like an odometer */
        int pick[NOP_MAX_ARGS] = { 0 };
        for (;;) {
            result *r = add_result(&rs);
            if (!r) {
                rc = report_nomem();
                goto out;
            }
            if (selected) {
                run_case(lib, profile, &t, pick, r);
            } else {
                case_label(&t, pick, r->label, sizeof r->label);
                r->op = t.op;
                r->status = SKIPPED;
            }
            counts[r->status]++;
            if (!json)
                print_line(r);
            int a = t.nargs - 1;
            while (a >= 0 && ++pick[a] == t.nalts[a])
                pick[a--] = 0;
            if (a < 0)
                break;
        }
    }
    int failed = counts[FAILED] + counts[ERRORED];
    if (json)
        print_json(nop_library_name(lib), &rs, counts);
    else if (counts[SKIPPED])
        printf("%d passed, %d failed, %d skipped\n", counts[PASSED], failed, counts[SKIPPED]);
    else
        printf("%d passed, %d failed\n", counts[PASSED], failed);
    rc = failed ? STATUS_FAIL : 0;
    if (junit) {
        int jrc = write_junit(junit, nop_library_name(lib), &rs, counts, now() - t0);
        rc = jrc ? jrc : rc;
    }
out:
    free(rs.v);
    nop_profile_free(profile);
    nop_library_close(lib);
    nop_manifest_free(m);
    free_option_lists(&spec);
    free(args);
    return rc;
}
