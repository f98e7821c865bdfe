/*
 * cmd-test.c - `neuronop test [DIR|MANIFEST]`: runs the test cases of a manifest under every
 * legal execution of the device and reports each.
 *
 * Real cores never synchronise, so any order of them is a legal execution, and a multicore
 * kernel must give one answer on every core count its test lists.  Each sub-case (one
 * combination of argument values) runs on each core count under the sequential, reversed and
 * parallel schedules and --schedules shuffled ones.  It fails when a device rule breaks, when
 * two executions disagree ("depends on core order" / "core count") or when the first differs
 * from the expected output beyond the tolerances.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static struct device_cli dc;
static const char *pattern;
static long shuffles = 2;
static bool verbose;

static const struct option_spec options[] = {
    { 'k', "filter", OPT_STRING, &pattern, "PATTERN",
      "run only the cases whose name contains PATTERN" },
    { 0, "schedules", OPT_INT, &shuffles, "N", "shuffled schedules per run (default 2)" },
    { 0, "device", OPT_STRING, &dc.device, "NAME", "device profile (default trn1)" },
    { 'j', "threads", OPT_INT, &dc.threads, "N", "host threads (default: one per CPU)" },
    { 0, "seed", OPT_INT, &dc.seed, "N", "seed for generators and shuffles (default 0)" },
    { 0, "timeout", OPT_DOUBLE, &dc.timeout, "SECONDS", "stop a kernel after this long" },
    { 0, "check", OPT_LIST, &dc.check, "LIST", "turn device checks on (comma-separated)" },
    { 0, "no-check", OPT_LIST, &dc.no_check, "LIST", "turn device checks off (race, ...)" },
    { 'v', "verbose", OPT_FLAG, &verbose, NULL, "show the build steps" },
    { 0, NULL, 0, NULL, NULL, NULL },
};

static const struct command_spec spec = {
    "test", "[options] [DIR|MANIFEST]",
    "Run the test cases of a manifest's 'tests' section under every core order and\n"
    "count, and report each case; exit 1 if any failed.",
    options, 0, 1,
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One execution: a core count and a schedule. */
typedef struct execution {
    int cores;                 /* 0: the profile's */
    const char *schedule;
    long seed;
    char label[64];
} execution;

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

/* Runs one execution; *out receives the output (caller frees).  Prints a failure itself and
 * returns 1 for a broken rule, 2 for an input problem. */
static int execute(const nop_library *lib, const nop_profile *profile, const execution *e,
                   int opi, const nop_value *vals, int nargs, nop_tensor **out)
{
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .threads = (int)dc.threads, .cores = e->cores,
                          .seed = (uint64_t)e->seed, .timeout = dc.timeout,
                          .disabled_checks = dc.disabled, .diag = report_sink };
    o.schedule = strcmp(e->schedule, "sequential") == 0 ? NOP_SCHED_SEQUENTIAL
                 : strcmp(e->schedule, "reversed") == 0 ? NOP_SCHED_REVERSED
                 : strcmp(e->schedule, "shuffle") == 0  ? NOP_SCHED_SHUFFLE
                                                        : NOP_SCHED_PARALLEL;
    if (nop_device_new(&dev, profile, &o, &err) != 0)
        return report_error(&err);
    nop_run_result res;
    int rc = nop_device_run(dev, lib, opi, vals, nargs, &res, &err);
    if (rc != 0) {
        rc = report_error(&err);
    } else {
        *out = res.output;
        res.output = NULL;
    }
    nop_run_result_clear(&res);
    nop_device_free(dev);
    return rc;
}

/* Runs one sub-case on every execution; prints its line.  Returns 0 when it passed. */
static int run_case(const nop_library *lib, const nop_profile *profile, const nop_testinfo *t,
                    const int *pick)
{
    char label[512];
    case_label(t, pick, label, sizeof label);
    fflush(stdout);   /* keep case lines and their stderr messages in order in a log */
    const char *argv[NOP_MAX_ARGS];
    for (int a = 0; a < t->nargs; a++)
        argv[a] = t->alts[a][pick[a]];
    int opi;
    nop_value *vals;
    nop_tensor **tensors;
    double t0 = now();
    int rc = parse_op_args(lib, t->op, t->nargs, (char **)argv, (uint64_t)dc.seed, &opi, &vals,
                           &tensors);
    if (rc != 0) {
        printf("ERROR %s: its arguments cannot be made (see above)\n", label);
        free_op_args(vals, tensors, t->nargs);
        return 1;
    }
    /* the executions: each core count, under each schedule */
    const int one = 0;
    const int *counts = t->ncores ? t->cores : &one;
    int ncounts = t->ncores ? t->ncores : 1;
    execution ex[16 * 40];
    int nex = 0;
    static const char *const fixed[] = { "sequential", "reversed", "parallel" };
    for (int c = 0; c < ncounts; c++) {
        for (int s = 0; s < 3 + (int)shuffles && nex < (int)(sizeof ex / sizeof ex[0]); s++) {
            execution *e = &ex[nex++];
            e->cores = counts[c];
            e->schedule = s < 3 ? fixed[s] : "shuffle";
            e->seed = dc.seed + s - 2;   /* shuffles use seed+1, seed+2, ... */
            int n = s < 3 ? snprintf(e->label, sizeof e->label, "%s", e->schedule)
                          : snprintf(e->label, sizeof e->label, "shuffle (seed %ld)", e->seed);
            if (counts[c])
                snprintf(e->label + n, sizeof e->label - (size_t)n, " on %d core%s", counts[c],
                         counts[c] == 1 ? "" : "s");
        }
    }
    nop_tensor *first = NULL;
    int first_ex = -1;
    rc = 0;
    for (int i = 0; i < nex && rc == 0; i++) {
        nop_tensor *out = NULL;
        if (execute(lib, profile, &ex[i], opi, vals, t->nargs, &out) != 0) {
            printf("FAIL  %s: a device rule was broken under %s (see above)\n", label,
                   ex[i].label);
            rc = 1;
            break;
        }
        if (!first) {
            first = out;
            first_ex = i;
            continue;
        }
        nop_compare cmp;
        nop_tensor_compare(out, first, 0, 0, &cmp);
        if (cmp.mismatches) {
            bool count = ex[i].cores != ex[first_ex].cores;
            printf("FAIL  %s: the result depends on core %s: %s and %s differ in %lld "
                   "element%s\n", label, count ? "count" : "order", ex[first_ex].label,
                   ex[i].label, (long long)cmp.mismatches, cmp.mismatches == 1 ? "" : "s");
            for (int w = 0; w < cmp.nworst && w < 3; w++)
                printf("      element %lld: %.9g vs %.9g\n", (long long)cmp.worst[w].index,
                       cmp.worst[w].want, cmp.worst[w].got);
            rc = 1;
        }
        nop_tensor_free(out);
    }
    if (rc == 0 && t->expect) {
        nop_tensor *want;
        nop_error err;
        if (nop_tensor_load_npy(&want, t->expect, &err) != 0) {
            report_error(&err);
            printf("ERROR %s: cannot read its expected output '%s'\n", label, t->expect);
            rc = 1;
        } else {
            double r = t->rtol, a = t->atol;
            if (r < 0 || a < 0) {
                double dr, da;
                default_tolerances(nop_tensor_dtype(want), &dr, &da);
                r = r < 0 ? dr : r;
                a = a < 0 ? da : a;
            }
            nop_compare cmp;
            nop_tensor_compare(first, want, r, a, &cmp);
            if (cmp.mismatches) {
                printf("FAIL  %s: %lld element%s differ from '%s' beyond rtol=%g atol=%g%s%s\n",
                       label, (long long)cmp.mismatches, cmp.mismatches == 1 ? "" : "s",
                       t->expect, r, a, cmp.why[0] ? ": " : "", cmp.why);
                for (int w = 0; w < cmp.nworst && w < 3; w++)
                    printf("      element %lld: got %.9g, expected %.9g\n",
                           (long long)cmp.worst[w].index, cmp.worst[w].got, cmp.worst[w].want);
                rc = 1;
            }
            nop_tensor_free(want);
        }
    }
    if (rc == 0)
        printf("ok    %s (%d execution%s, %.1f ms)\n", label, nex, nex == 1 ? "" : "s",
               (now() - t0) * 1e3);
    fflush(stdout);
    nop_tensor_free(first);
    free_op_args(vals, tensors, t->nargs);
    return rc;
}

int cmd_test(int argc, char **argv)
{
    char **args;
    int nargs;
    dc.timeout = 0;
    int rc = parse_options(&spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : NOP_EXIT_USAGE;
    const char *target = nargs ? args[0] : ".";
    nop_error err;
    nop_manifest *m = NULL;
    nop_library *lib = NULL;
    nop_profile *profile = NULL;
    int passed = 0, failed = 0, skipped = 0;
    if (shuffles < 0 || shuffles > 37) {
        report_plain_error("--schedules takes 0 to 37 shuffled schedules");
        rc = NOP_EXIT_USAGE;
        goto out;
    }
    if (nop_manifest_load(&m, target, &err) != 0) {
        rc = report_error(&err);
        goto out;
    }
    if ((rc = open_target(target, verbose, &lib)) != 0 ||
        (rc = device_cli_checks(&dc)) != 0)
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
        if (pattern && !strstr(t.name, pattern)) {
            skipped++;
            continue;
        }
        /* every combination of the arguments' alternatives, like an odometer */
        int pick[NOP_MAX_ARGS] = { 0 };
        for (;;) {
            if (run_case(lib, profile, &t, pick) == 0)
                passed++;
            else
                failed++;
            int a = t.nargs - 1;
            while (a >= 0 && ++pick[a] == t.nalts[a])
                pick[a--] = 0;
            if (a < 0)
                break;
        }
    }
    if (skipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    rc = failed ? NOP_EXIT_FAIL : 0;
out:
    nop_profile_free(profile);
    nop_library_close(lib);
    nop_manifest_free(m);
    free_option_lists(&spec);
    free(args);
    return rc;
}
