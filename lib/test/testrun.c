/*
 * testrun.c - a manifest's test cases, run under every legal execution of the device
 * (nop_test_run; `neuronop test` prints what it reports).
 *
 * Real cores never synchronise, so any order of them is a legal execution, and a multicore
 * kernel must give one answer on every core count its test lists.  Each sub-case (one
 * combination of argument values) runs on each core count under the sequential, reversed and
 * parallel schedules and `shuffles` shuffled ones.  It fails when a device rule breaks, when
 * two executions disagree ("depends on core order" / "core count") or when the first differs
 * from the expected output (a reference function's, or an expect file's) beyond the
 * tolerances.  Each sub-case's result goes to the caller's callback as soon as it is known.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

/* One execution of a sub-case: a core count and a schedule. */
typedef struct execution {
    int cores;                 /* 0: the profile's */
    enum nop_schedule schedule;
    uint64_t seed;
    char label[64];
} execution;

/* What a whole run shares. */
typedef struct suite {
    const nop_library *lib;
    const nop_profile *profile;
    const nop_test_opts *o;
    nopi_wire *wire;           /* inside a worker: its devices report through it */
} suite;

/* A device for one execution: in-process inside a worker (attached to its wire, so
 * diagnostics and deadlines reach the parent), isolated or not as asked otherwise. */
static int new_device(const suite *s, nop_device_opts *o, nop_device **dev, nop_error *err)
{
    o->isolate = false;
    if (nop_device_new(dev, s->profile, o, err) != 0)
        return -1;
    if (s->wire)
        nopi_device_attach(*dev, s->wire);
    return 0;
}

static void note(nop_test_result *res, const char *fmt, ...) NOPI_PRINTF(2, 3);
static void note(nop_test_result *res, const char *fmt, ...)
{
    size_t used = strlen(res->message);
    if (used && used + 1 < sizeof res->message)
        res->message[used++] = '\n', res->message[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message + used, sizeof res->message - used, fmt, ap);
    va_end(ap);
}

/* Sends an error that made a case fail to the caller's sink (the CLI prints it as it comes). */
static void pass_on(const suite *s, const nop_error *err)
{
    if (s->o->diag)
        s->o->diag(s->o->diag_ctx, &err->diag);
}

/* The executions of a case: each core count under each schedule; returns how many. */
static int plan(const suite *s, const nop_testinfo *t, execution *ex, int max)
{
    static const char *const fixed[] = { "sequential", "reversed", "parallel" };
    static const enum nop_schedule kinds[] = { NOP_SCHED_SEQUENTIAL, NOP_SCHED_REVERSED,
                                               NOP_SCHED_PARALLEL };
    const int one = 0;
    const int *counts = t->ncores ? t->cores : &one;
    int n = 0;
    for (int c = 0; c < (t->ncores ? t->ncores : 1); c++) {
        for (int k = 0; k < 3 + s->o->shuffles && n < max; k++) {
            execution *e = &ex[n++];
            e->cores = counts[c];
            e->schedule = k < 3 ? kinds[k] : NOP_SCHED_SHUFFLE;
            e->seed = s->o->seed + (uint64_t)k - 2;   /* shuffles use seed+1, seed+2, ... */
            int len = k < 3 ? snprintf(e->label, sizeof e->label, "%s", fixed[k])
                            : snprintf(e->label, sizeof e->label, "shuffle (seed %llu)",
                                       (unsigned long long)e->seed);
            if (counts[c])
                snprintf(e->label + len, sizeof e->label - (size_t)len, " on %d core%s",
                         counts[c], counts[c] == 1 ? "" : "s");
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

/* Runs one execution.  *out receives the output (caller frees); a failure is passed on and
 * noted in res.  Returns 0 when the op ran. */
static int execute(const suite *s, const execution *e, int opi, const nop_value *vals,
                   int nargs, nop_tensor **out, nop_test_result *res)
{
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .threads = s->o->threads, .cores = e->cores,
                          .schedule = e->schedule, .seed = e->seed, .timeout = s->o->timeout,
                          .disabled_checks = s->o->disabled_checks, .diag = s->o->diag,
                          .diag_ctx = s->o->diag_ctx };
    if (new_device(s, &o, &dev, &err) != 0) {
        pass_on(s, &err);
        note(res, "cannot make the device: %s", err.diag.msg);
        return -1;
    }
    nop_run_result run;
    int rc = nop_device_run(dev, s->lib, opi, vals, nargs, &run, &err);
    if (rc != 0) {
        pass_on(s, &err);
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
                 nop_test_result *res, const char *what)
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

/* The case's tolerances: its own, or the defaults for the expected output's dtype. */
static void tolerances(const nop_testinfo *t, const nop_tensor *want, double *r, double *a)
{
    double dr, da;
    nop_default_tolerances(nop_tensor_dtype(want), &dr, &da);
    *r = t->rtol < 0 ? dr : t->rtol;
    *a = t->atol < 0 ? da : t->atol;
}

/* Compares the kernel's output with its reference function's, run once on the host. */
static void against_reference(const suite *s, const nop_testinfo *t, const nop_value *vals,
                              const nop_tensor *got, nop_test_result *res)
{
    int ref = nop_library_find_reference(s->lib, t->reference);
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .timeout = s->o->timeout, .diag = s->o->diag,
                          .diag_ctx = s->o->diag_ctx };
    if (ref < 0 || new_device(s, &o, &dev, &err) != 0) {
        res->status = NOP_TEST_ERRORED;
        note(res, "cannot run reference function '%s'", t->reference);
        return;
    }
    nop_run_result run;
    if (nop_device_run_reference(dev, s->lib, ref, vals, t->nargs, &run, &err) != 0) {
        pass_on(s, &err);
        res->status = NOP_TEST_ERRORED;
        note(res, "its reference function '%s' failed: %s", t->reference, err.diag.msg);
    } else {
        double r, a;
        tolerances(t, run.output, &r, &a);
        char what[512];
        snprintf(what, sizeof what, "the output differs from reference '%s' beyond rtol=%g "
                 "atol=%g", t->reference, r, a);
        if (!same(got, run.output, r, a, res, what))
            res->status = NOP_TEST_FAILED;
    }
    nop_run_result_clear(&run);
    nop_device_free(dev);
}

/* Compares the kernel's output with the case's expect file. */
static void against_file(const suite *s, const nop_testinfo *t, const nop_tensor *got,
                         nop_test_result *res)
{
    nop_tensor *want;
    nop_error err;
    if (nop_tensor_load_npy(&want, t->expect, &err) != 0) {
        pass_on(s, &err);
        res->status = NOP_TEST_ERRORED;
        note(res, "cannot read its expected output '%s'", t->expect);
        return;
    }
    double r, a;
    tolerances(t, want, &r, &a);
    char what[1200];
    snprintf(what, sizeof what, "the output differs from '%s' beyond rtol=%g atol=%g",
             t->expect, r, a);
    if (!same(got, want, r, a, res, what))
        res->status = NOP_TEST_FAILED;
    nop_tensor_free(want);
}

/* Runs the executions of one sub-case, comparing each with the first; *first keeps the
 * first output (caller frees). */
static void run_executions(const suite *s, const nop_testinfo *t, int opi,
                           const nop_value *vals, nop_tensor **first, nop_test_result *res)
{
    execution ex[16 * 40];
    int nex = plan(s, t, ex, (int)NOPI_ARRAY_LEN(ex));
    int first_ex = -1;
    for (int i = 0; i < nex && res->status == NOP_TEST_PASSED; i++) {
        nop_tensor *out = NULL;
        res->executions++;
        if (execute(s, &ex[i], opi, vals, t->nargs, &out, res) != 0) {
            res->status = NOP_TEST_FAILED;
            break;
        }
        if (!*first) {
            *first = out;
            first_ex = i;
            continue;
        }
        char what[256];
        snprintf(what, sizeof what, "the result depends on core %s: %s and %s differ",
                 ex[i].cores != ex[first_ex].cores ? "count" : "order", ex[first_ex].label,
                 ex[i].label);
        if (!same(out, *first, 0, 0, res, what))
            res->status = NOP_TEST_FAILED;
        nop_tensor_free(out);
    }
}

/* Runs one sub-case on every execution and fills res. */
static void run_case(const suite *s, const nop_testinfo *t, const int *pick,
                     nop_test_result *res)
{
    double t0 = nopi_now();
    const char *argv[NOP_MAX_ARGS];
    for (int a = 0; a < t->nargs; a++)
        argv[a] = t->alts[a][pick[a]];
    int opi;
    nop_value *vals;
    nop_tensor **tensors;
    nop_error err;
    res->status = NOP_TEST_PASSED;
    if (nop_values_parse(s->lib, t->op, t->nargs, argv, s->o->seed, &opi, &vals, &tensors,
                         &err) != 0) {
        pass_on(s, &err);
        res->status = NOP_TEST_ERRORED;
        note(res, "its arguments cannot be made (see the message above)");
    } else {
        nop_tensor *first = NULL;
        run_executions(s, t, opi, vals, &first, res);
        if (res->status == NOP_TEST_PASSED && t->reference)
            against_reference(s, t, vals, first, res);
        if (res->status == NOP_TEST_PASSED && t->expect)
            against_file(s, t, first, res);
        nop_tensor_free(first);
    }
    nop_values_free(vals, tensors, t->nargs);
    res->seconds = nopi_now() - t0;
}

/* ---- sub-cases in a worker process ------------------------------------------------------ */

enum { REC_CASE = NOPI_REC_USER };

/* The worker's state: the suite and manifest as they were at the fork, and the library it
 * loads for its first case (kept for the next ones). */
typedef struct case_server {
    suite s;
    nop_test_opts o;           /* the caller's, with diagnostics sent to it */
    const nop_manifest *m;
    nop_library *opened;
    bool loaded;
} case_server;

/* A request: which case, and which alternative of each argument. */
typedef struct case_req {
    int32_t test;
    int32_t pick[NOP_MAX_ARGS];
} case_req;

static int serve_case(nop_device *cdev, void *ctx, const void *data, size_t len, nopi_wire *w,
                      nop_error *err)
{
    (void)cdev;
    case_server *cs = ctx;
    case_req rq;
    if (len != sizeof rq)
        return nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "a malformed request");
    memcpy(&rq, data, sizeof rq);
    if (!cs->loaded) {   /* loaded here, in the worker, if the caller only described it */
        if (!(cs->s.lib = nopi_library_runnable(cs->s.lib, &cs->opened, err)))
            return -1;
        cs->loaded = true;
        cs->s.wire = w;
        cs->o = *cs->s.o;
        cs->o.diag = nopi_wire_diag;
        cs->o.diag_ctx = w;
        cs->s.o = &cs->o;
    }
    nop_testinfo t;
    nop_manifest_test(cs->m, rq.test, &t);
    nop_test_result res;
    memset(&res, 0, sizeof res);
    run_case(&cs->s, &t, rq.pick, &res);
    if (res.status != NOP_TEST_PASSED)
        nopi_wire_retire(w);   /* a failing kernel may have broken the worker: a fresh one */
    if (nopi_wire_put(w, REC_CASE, &res, sizeof res) != 0)
        return nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "cannot send the result");
    return 0;
}

static int take_case(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    (void)own;
    nop_test_result *res = ctx;
    if (type != REC_CASE || len != sizeof *res)
        return -1;
    const char *op = res->op;   /* the parent's pointer and label, not the worker's */
    char label[sizeof res->label];
    memcpy(label, res->label, sizeof label);
    memcpy(res, data, sizeof *res);
    res->op = op;
    memcpy(res->label, label, sizeof label);
    res->message[sizeof res->message - 1] = '\0';
    if ((unsigned)res->status > NOP_TEST_SKIPPED)
        res->status = NOP_TEST_FAILED;
    return 0;
}

/* Runs sub-case (test, pick) with all its executions and its reference in the suite's
 * worker: a kernel that kills the worker fails the case, and the next case gets a new
 * worker. */
static void run_case_isolated(nopi_server *srv, const suite *s, int test,
                              const nop_testinfo *t, const int *pick, nop_test_result *res)
{
    double t0 = nopi_now();
    nop_error err;
    case_req rq = { test, { 0 } };
    for (int a = 0; a < t->nargs && a < NOP_MAX_ARGS; a++)
        rq.pick[a] = pick[a];
    double budget = 30.0 + (s->o->timeout > 0 ? s->o->timeout : s->profile->timeout);
    int runs = (t->ncores ? t->ncores : 1) * (3 + s->o->shuffles) + 1;   /* and a reference */
    if (nopi_server_call(srv, t->op, budget, runs, &rq, sizeof rq, take_case, res, &err) != 0) {
        pass_on(s, &err);
        res->status = NOP_TEST_FAILED;
        note(res, "%s%s%s", err.diag.where, err.diag.where[0] ? ": " : "", err.diag.msg);
        res->seconds = nopi_now() - t0;
    }
}

/* The device and fork server of an isolated suite; 0, or -1 with err filled. */
static int start_server(const suite *s, const nop_manifest *m, nop_device **dev,
                        case_server *cs, nopi_server **srv, nop_error *err)
{
    nop_device_opts o = { .timeout = s->o->timeout, .diag = s->o->diag,
                          .diag_ctx = s->o->diag_ctx, .isolate = true };
    *cs = (case_server){ *s, *s->o, m, NULL, false };
    if (nop_device_new(dev, s->profile, &o, err) != 0)
        return -1;
    if (nopi_server_new(srv, *dev, serve_case, cs, err) != 0) {
        nop_device_free(*dev);
        return -1;
    }
    return 0;
}

int nop_test_run(const nop_manifest *m, const nop_library *lib, const nop_profile *profile,
                 const nop_test_opts *opts, nop_test_summary *sum, nop_error *err)
{
    *sum = (nop_test_summary){ 0 };
    if (opts->shuffles < 0 || opts->shuffles > NOP_TEST_MAX_SHUFFLES)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "shuffled schedules must be 0 to %d, "
                         "not %d", NOP_TEST_MAX_SHUFFLES, opts->shuffles);
    int nshards = opts->nshards > 0 ? opts->nshards : 1;
    int shard = opts->nshards > 0 ? opts->shard : 1;
    if (shard < 1 || shard > nshards)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "shard %d of %d does not exist",
                         shard, nshards);
    suite s = { lib, profile, opts, NULL };
    nop_device *dev = NULL;
    nopi_server *srv = NULL;
    case_server cs;
    if (opts->isolate && start_server(&s, m, &dev, &cs, &srv, err) != 0)
        return -1;
    nop_test_result *res = malloc(sizeof *res);
    if (!res) {
        nopi_server_free(srv);
        nop_device_free(dev);
        return nopi_nomem(err);
    }
    for (int i = 0; i < nop_manifest_test_count(m); i++) {
        nop_testinfo t;
        nop_manifest_test(m, i, &t);
        bool selected = (!opts->filter || strstr(t.name, opts->filter)) &&
                        i % nshards == shard - 1;
        /* every combination of the arguments' alternatives, like an odometer */
        int pick[NOP_MAX_ARGS] = { 0 };
        for (;;) {
            memset(res, 0, sizeof *res);
            case_label(&t, pick, res->label, sizeof res->label);
            res->op = t.op;
            res->status = NOP_TEST_SKIPPED;
            if (selected && srv)
                run_case_isolated(srv, &s, i, &t, pick, res);
            else if (selected)
                run_case(&s, &t, pick, res);
            int *count[] = { &sum->passed, &sum->failed, &sum->errored, &sum->skipped };
            (*count[res->status])++;
            if (opts->on_result)
                opts->on_result(opts->ctx, res);
            int a = t.nargs - 1;
            while (a >= 0 && ++pick[a] == t.nalts[a])
                pick[a--] = 0;
            if (a < 0)
                break;
        }
    }
    free(res);
    nopi_server_free(srv);
    nop_device_free(dev);
    return 0;
}
