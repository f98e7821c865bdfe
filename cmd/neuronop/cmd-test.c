/*
 * cmd-test.c - `neuronop test [DIR|MANIFEST]`: runs the test cases of a manifest under every
 * legal execution of the device (nop_test_run, lib/test) and reports each case as a line as
 * it ends, then as JSON (--json) and JUnit XML (--junit) when asked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "devopts.h"
#include "junit.h"
#include "report.h"

static struct device_cli dc = { .spec = &test_spec };
static const char *pattern, *shard, *junit;
static long shuffles = 2;
static bool verbose, json;

static const struct option_spec options[] = {
    { 'k', "filter", OPT_STRING, &pattern, "PATTERN",
      "run only the cases (or sub-cases, name[v1, v2]) whose name contains PATTERN",
      COMPLETE_NONE, NULL, 0, 0 },
    { 0, "shard", OPT_STRING, &shard, "I/N", "run the I-th of N deterministic slices",
      COMPLETE_NONE, NULL, 0, 0 },
    OPTION_RANGE(0, "schedules", OPT_INT, &shuffles, "N",
                 "shuffled schedules per core count of each case (default 2)", 0,
                 NOP_TEST_MAX_SHUFFLES),
    OPTION(0, "junit", OPT_STRING, &junit, "FILE", "also write JUnit XML for CI dashboards"),
    OPTION(0, "json", OPT_FLAG, &json, NULL, "print the results as JSON"),
    DEVICE_NAME_OPTION(dc),
    THREADS_OPTION(dc),
    SEED_OPTION(dc),
    TIMEOUT_OPTION(dc),
    DEVICE_CHECK_OPTIONS(dc),
    BUILD_DIR_OPTION(dc),
    OPTION('v', "verbose", OPT_FLAG, &verbose, NULL,
           "show the build steps, the sandbox, and where references run"),
    OPTIONS_END,
};

const struct command_spec test_spec = {
    "test", "[options] [DIR|MANIFEST]",
    "Run the test cases of a manifest's 'tests' section under every core order and\n"
    "count, and report each case; exit 1 if any failed.",
    options, 0, 1,
    "run a manifest's test cases under every core order and count",
    "test takes one library; to run only the cases whose name contains a word, give -k WORD",
};

/* The results, kept for JSON and JUnit, which are written after the last case. */
typedef struct results {
    nop_test_result *v;
    int n, cap;
    bool oom;
    bool multicore;   /* the library's: its cases' messages are held (report_hold) */
} results;

/* ---- reporting -------------------------------------------------------------------------- */

/* The warnings printed so far, by a hash of where and what: a warning every execution of
 * every case gives again (a shape function's, five times a case) is printed once. */
#define SEEN_WARNINGS 256
typedef struct seen {
    uint64_t hash[SEEN_WARNINGS];
    int n;
} seen;

static uint64_t diag_hash(const nop_diag *d)
{
    uint64_t h = 1469598103934665603u;   /* FNV-1a */
    const char *parts[] = { d->where, "\n", d->msg };
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211u;
    return h;
}

/* nop_test_run's diagnostics: as report_sink prints them, each warning once. */
static void test_sink(void *ctx, const nop_diag *d)
{
    seen *s = ctx;
    if (d->severity == NOP_SEV_WARNING) {
        uint64_t h = diag_hash(d);
        for (int i = 0; i < s->n; i++)
            if (s->hash[i] == h)
                return;
        if (s->n < SEEN_WARNINGS)
            s->hash[s->n++] = h;
    }
    report_sink(NULL, d);
}

static void print_line(const nop_test_result *r)
{
    static const char *const words[] = { "ok   ", "FAIL ", "ERROR", "skip " };
    if (r->status == NOP_TEST_PASSED) {
        printf("ok    %s (%d execution%s, %.1f ms)\n", r->label, r->executions,
               r->executions == 1 ? "" : "s", r->seconds * 1e3);
    } else if (r->status != NOP_TEST_SKIPPED) {
        const char *nl = strchr(r->message, '\n');
        printf("%s %s: %.*s (%.1f ms)\n", words[r->status], r->label,
               nl ? (int)(nl - r->message) : (int)strlen(r->message), r->message,
               r->seconds * 1e3);
        for (const char *p = nl; p && *p; p = strchr(p + 1, '\n')) {
            const char *end = strchr(p + 1, '\n');
            printf("      %.*s\n", end ? (int)(end - p - 1) : (int)strlen(p + 1), p + 1);
        }
    }
    flush_stdout();
}

static void print_json(const char *library, const results *rs, const nop_test_summary *sum)
{
    static const char *const words[] = { "passed", "failed", "error", "skipped" };
    printf("{\"library\": ");
    print_json_string(stdout, library);
    /* failed counts the errors too, as the summary line does; errors says how many of them
     * are, as JUnit's errors does */
    printf(", \"passed\": %d, \"failed\": %d, \"errors\": %d, \"skipped\": %d, \"cases\": [",
           sum->passed, sum->failed + sum->errored, sum->errored, sum->skipped);
    for (int i = 0; i < rs->n; i++) {
        const nop_test_result *r = &rs->v[i];
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

/* nop_test_run's callback: prints the case's line and keeps the result. */
static void on_result(void *ctx, const nop_test_result *r)
{
    results *rs = ctx;
    report_release();   /* the case's messages, before its line */
    report_hold(rs->multicore);
    if (!json)
        print_line(r);
    if (rs->n == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 16;
        nop_test_result *v = realloc(rs->v, (size_t)cap * sizeof *v);
        if (!v) {
            rs->oom = true;
            return;
        }
        rs->v = v;
        rs->cap = cap;
    }
    rs->v[rs->n++] = *r;
}

/* "I/N" with 1 <= I <= N <= 1000000; -1 for anything else. */
static int parse_shard(const char *s, long *i, long *n)
{
    char *end;
    errno = 0;
    *i = strtol(s, &end, 10);
    if (errno || end == s || *end != '/')
        return -1;
    const char *rest = end + 1;
    *n = strtol(rest, &end, 10);
    return errno || end == rest || *end || *n < 1 || *n > 1000000 || *i < 1 || *i > *n ? -1
                                                                                       : 0;
}

/* Whether -k PATTERN names a case of m (a typo that matched nothing would skip every case,
 * and pass); 0, or the exit status after naming the first cases there are.  Before the run
 * (!after) a case with sub-cases passes too: their names, name[v1, v2], are known once it
 * ran. */
static int check_pattern(const nop_manifest *m, const char *pat, bool after)
{
    int n = nop_manifest_test_count(m), listed = 0;
    bool full = false;   /* no later, shorter name after one left out */
    char names[512] = "";
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        nop_testinfo t;
        nop_manifest_test(m, i, &t);
        bool subs = false;
        for (int a = 0; a < t.nargs; a++)
            subs = subs || t.nalts[a] > 1;
        if (strstr(t.name, pat) || (subs && !after))
            return 0;
        full = full || listed == 8 || len + strlen(t.name) + 2 >= sizeof names;
        if (!full)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                    listed++ ? ", " : "", t.name);
    }
    if (n == 0) {
        return command_usage_error(&test_spec, "-k '%s' matches no test case: '%s' has none; "
                                   "add a 'tests' section (see neuronop.yaml(5))", pat,
                                   nop_manifest_path(m));
    }
    char more[64] = "";
    if (listed < n)
        snprintf(more, sizeof more, " and %d more (under its 'tests')", n - listed);
    return command_usage_error(&test_spec, "-k '%s' matches no test case of '%s' (nor a "
                               "sub-case's name[v1, v2]); give part of a case's name: %s%s",
                               pat, nop_manifest_path(m), names, more);
}

/* With -v: whether a case's reference runs alongside its executions, which depends on the
 * CPUs neuronop may keep busy (neuronop-test(1)). */
static void note_alongside(void)
{
    double cpus = nop_cpus_usable();
    if (cpus >= NOP_TEST_ALONGSIDE_CPUS)
        report_note("a case's reference runs alongside its executions (%g CPUs to spare)",
                    cpus);
    else
        report_note("a case's reference runs after its executions: %g CPU%s to spare by the "
                    "CPU affinity and the cgroups' CPU quota, fewer than %g", cpus,
                    cpus == 1 ? "" : "s", NOP_TEST_ALONGSIDE_CPUS);
}

int cmd_test(int argc, char **argv)
{
    char **args;
    int nargs;
    dc.timeout = 0;
    int rc = parse_options(&test_spec, argc, argv, &args, &nargs);
    if (rc < 0 && junit && check_output_file(junit, "a .xml file") == 0)
        write_junit_error(junit, "neuronop test", STATUS_USAGE);   /* --junit came before the
                                                                    * error: no stale report
                                                                    * (an auditor's find) */
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    const char *target = nargs ? args[0] : ".";
    nop_error err;
    nop_manifest *m = NULL;
    nop_library *lib = NULL;
    nop_profile *profile = NULL;
    results rs = { 0 };
    seen warned = { .n = 0 };
    nop_test_summary sum;
    long shard_i = 1, shard_n = 1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    if (shard && parse_shard(shard, &shard_i, &shard_n) != 0) {
        rc = command_usage_error(&test_spec, "--shard takes I/N with 1 <= I <= N <= 1000000, "
                                 "like 2/4, not '%s'", shard);
        goto out;
    }
    if (junit && (rc = check_output_file(junit, "a .xml file")) != 0) {
        junit = NULL;   /* not a file to write */
        goto out;
    }
    /* first, before even the manifest: named by the target, as write_junit_error does
     * when there is no manifest */
    if (junit && (rc = write_junit_unfinished(junit, target)) != 0) {
        junit = NULL;   /* could not be written: said */
        goto out;
    }
    if (nop_manifest_load(&m, target, &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    if (pattern && (rc = check_pattern(m, pattern, false)) != 0)
        goto out;
    if ((rc = device_cli_checks(&dc)) != 0)
        goto out;
    /* the device before the build: a case it cannot run is the manifest's error, said now */
    if (nop_profile_load(&profile, dc.device ? dc.device : DEFAULT_DEVICE, share_dir(), &err) != 0 ||
        nop_manifest_check_cores(m, profile, &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    if ((rc = open_target(target, dc.build_dir, verbose, dc.memcheck, &lib)) != 0)
        goto out;
    if (verbose && sandbox_on())
        note_alongside();
    if (nop_manifest_test_count(m) == 0)
        report_warning("'%s' declares no tests; add a 'tests' section (see neuronop.yaml(5))",
                       nop_manifest_path(m));
    nop_test_opts o = { .filter = pattern, .shard = (int)shard_i, .nshards = (int)shard_n,
                        .shuffles = (int)shuffles, .seed = (uint64_t)dc.seed,
                        .threads = (int)dc.threads, .timeout = dc.timeout,
                        .disabled_checks = dc.disabled, .isolate = sandbox_on(), .diag = test_sink,
                        .diag_ctx = &warned, .on_result = on_result, .ctx = &rs };
    rs.multicore = nop_library_multicore(lib);
    report_hold(rs.multicore);   /* one line for a message every core gave, case by case */
    int trc = nop_test_run(m, lib, profile, &o, &sum, &err);
    report_release();
    if (trc != 0) {
        rc = report_error(&err);
        goto out;
    }
    if (rs.oom) {
        rc = report_nomem();
        goto out;
    }
    /* a pattern no case name holds, which no sub-case's name held either (in one shard of
     * several, another shard may have had it) */
    if (pattern && shard_n == 1 && sum.passed + sum.failed + sum.errored == 0 &&
        (rc = check_pattern(m, pattern, true)) != 0)
        goto out;
    int failed = sum.failed + sum.errored;
    if (json)
        print_json(nop_library_name(lib), &rs, &sum);
    else if (sum.skipped)
        printf("%d passed, %d failed, %d skipped\n", sum.passed, failed, sum.skipped);
    else
        printf("%d passed, %d failed\n", sum.passed, failed);
    rc = failed ? STATUS_FAIL : 0;
    if (junit) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double t1 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
        int jrc = write_junit(junit, nop_library_name(lib), rs.v, rs.n, &sum, t1 - t0);
        rc = jrc ? jrc : rc;
        junit = NULL;   /* written */
    }
out:
    if (junit && rc != 0)   /* no case ran: the report says so, never an earlier run's */
        write_junit_error(junit, m ? nop_manifest_name(m) : target, rc);
    free(rs.v);
    nop_profile_free(profile);
    nop_library_close(lib);
    nop_manifest_free(m);
    free_option_lists(&test_spec);
    free(args);
    return rc;
}
