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
#include <limits.h>
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
    bool alongside;            /* a case's reference runs while its executions do: this
                                * process may use more than one CPU */
    const char *folder;        /* the manifest's folder, which its argument files are in */
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
    nopi_line_clean(res->message + used);   /* one line, whatever file names it quotes */
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

/* The sub-case's label: name[v1, v2] when some argument has alternatives (the base names of
 * its files). */
/* The last k components of path v (all of it when it has no more). */
static const char *last_components(const char *v, int k)
{
    const char *p = v + strlen(v);
    while (p > v)
        if (*--p == '/' && --k == 0)
            return p + 1;
    return v;
}

/* How alternative i of argument a is named in a label: its base name (a file's; any other
 * value is itself), or as many of its last path components as tell it from the argument's
 * other alternatives (a/x.npy and b/x.npy, not x.npy twice).  *twin is set when another
 * alternative is the very same value, which no name tells apart. */
/* Whether a and b read the same once made plain text, as a label shows them (a control
 * character or a byte that is not UTF-8 as '?': a reviewer's find, two paths that differ
 * only there were one label). */
static bool shown_alike(const char *a, const char *b)
{
    char x[PATH_MAX], y[PATH_MAX];
    snprintf(x, sizeof x, "%s", a);
    snprintf(y, sizeof y, "%s", b);
    nopi_line_clean(x);
    nopi_line_clean(y);
    return strcmp(x, y) == 0;
}

static const char *alt_name(const nop_testinfo *t, int a, int i, bool *twin)
{
    const char *v = t->alts[a][i];
    for (int k = 1;; k++) {
        const char *name = last_components(v, k);
        bool unique = true;
        for (int j = 0; j < t->nalts[a]; j++) {
            if (j == i)
                continue;
            if (shown_alike(t->alts[a][j], v))
                *twin = true;   /* the same value, or one no label tells apart */
            else if (shown_alike(last_components(t->alts[a][j], k), name))
                unique = false;
        }
        if (unique || name == v)
            return name;
    }
}

static void case_label(const nop_testinfo *t, const int *pick, char *buf, size_t size)
{
    bool subs = false, twin = false;
    for (int a = 0; a < t->nargs; a++)
        subs |= t->nalts[a] > 1;
    size_t used = (size_t)snprintf(buf, size, "%s", t->name);
    if (subs && used < size) {
        used += (size_t)snprintf(buf + used, size - used, "[");
        for (int a = 0; a < t->nargs && used < size; a++)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", a ? ", " : "",
                                     alt_name(t, a, pick[a], &twin));
        if (used < size)
            snprintf(buf + used, size - used, "]");
        used++;   /* its length with the ']' */
    }
    /* cut, or the same as another's (a value listed twice), it ends with the sub-case's
     * number, so no two labels are the same: a failing sub-case must never share its name
     * with a passing one in a report (a red team's find).  A name is at most
     * NOPI_MAX_TEST_NAME bytes, which leaves room for the number. */
    if (subs && (used >= size || twin)) {
        unsigned long k = 0;
        for (int a = 0; a < t->nargs; a++)
            k = k * (unsigned long)t->nalts[a] + (unsigned long)pick[a];
        char tail[48];
        int n = snprintf(tail, sizeof tail, " ... sub-case %lu]", k + 1);
        if (n > 0 && (size_t)n < size) {   /* over the ']', or over the end when no room */
            size_t at = used - 1 < size - 1 - (size_t)n ? used - 1 : size - 1 - (size_t)n;
            memcpy(buf + at, tail, (size_t)n + 1);
        }
    }
    /* one line of plain text, as a worker's text is, on every path: the values are the
     * files' own names, as committed, whatever bytes a name holds (ESC [8m hid every line
     * after it), and a long label is cut wherever it fills buf, in a character maybe */
    nopi_line_clean(buf);
}

/* Compares a result with what it must equal within rtol and atol (shown when tolerant);
 * notes in res how it differs, after subject ("the output differs from 'x.npy'"): its shape
 * or dtype, or its worst elements. */
static bool same(const nop_tensor *got, const nop_tensor *want, double rtol, double atol,
                 bool tolerant, nop_test_result *res, const char *subject)
{
    nop_compare cmp;
    nop_tensor_compare(got, want, rtol, atol, &cmp);
    if (!cmp.mismatches)
        return true;
    if (cmp.why[0] && !cmp.nworst) {   /* its shape, or its dtype alone: no element differs */
        note(res, "%s: %s", subject, cmp.why);
        return false;
    }
    char tol[96] = "";
    if (tolerant)
        snprintf(tol, sizeof tol, " beyond rtol=%g atol=%g", rtol, atol);
    note(res, "%s%s in %lld element%s%s%s", subject, tol, (long long)cmp.mismatches,
         cmp.mismatches == 1 ? "" : "s", cmp.why[0] ? "; " : "", cmp.why);
    for (int w = 0; w < cmp.nworst && w < 3; w++) {
        char at[128];   /* "[1, 7]", as run --expect says it (a new user's find: "element
                         * 39" of a 4x10 output) */
        nop_tensor_index_str(want, cmp.worst[w].index, at, sizeof at);
        note(res, "  at %s: got %.9g, expected %.9g", at, cmp.worst[w].got, cmp.worst[w].want);
    }
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

/* Compares the kernel's output with the case's expect file. */
static void against_file(const suite *s, const nop_testinfo *t, const nop_tensor *got,
                         nop_test_result *res)
{
    nop_tensor *want;
    nop_error err;
    if (nop_tensor_load_npy(&want, t->expect, &err) != 0) {
        pass_on(s, &err);
        res->status = NOP_TEST_ERRORED;
        note(res, "its expected output: %s", err.diag.msg);   /* which names it */
        return;
    }
    double r, a;
    tolerances(t, want, &r, &a);
    char what[1200];
    snprintf(what, sizeof what, "the output differs from '%s'", t->expect);
    if (!same(got, want, r, a, true, res, what))
        res->status = NOP_TEST_FAILED;
    nop_tensor_free(want);
}

/* ---- the verdict (always the caller's) --------------------------------------------------- */

/* What the caller knows of one sub-case while its executions' results come in, from this
 * process or from a worker: the results are data, and every verdict is made here. */
typedef struct judge {
    const suite *s;
    const nop_testinfo *t;
    const execution *ex;
    int nex;
    int seen;                  /* executions reported */
    nop_tensor *first;         /* the first execution's output */
    bool over;                 /* failed or errored: nothing more is believed */
    bool ref_seen;
    nop_test_result *res;
    nop_run_result cur;        /* from a worker: the result being received */
} judge;

/* How an execution ended, as the one who ran it reports it (index: the execution; REF: the
 * reference; ARGS: the arguments could not be made). */
enum { REF = -1, ARGS = -2 };

/* The verdict on the reference's output. */
static void judge_reference(judge *j, int rc, const nop_error *err, nop_run_result *run)
{
    nop_test_result *res = j->res;
    j->ref_seen = true;
    if (rc != 0) {
        pass_on(j->s, err);
        res->status = NOP_TEST_ERRORED;
        note(res, "its reference function '%s' failed: %s", j->t->reference, err->diag.msg);
        j->over = true;
        return;
    }
    if (!run->output || !j->first) {
        res->status = NOP_TEST_ERRORED;
        note(res, "its reference function '%s' gave no output", j->t->reference);
        j->over = true;
        return;
    }
    double r, a;
    tolerances(j->t, run->output, &r, &a);
    char what[512];
    snprintf(what, sizeof what, "the output differs from reference '%s'", j->t->reference);
    if (!same(j->first, run->output, r, a, true, res, what))
        res->status = NOP_TEST_FAILED;
}

/* Takes the result of execution i (or REF, ARGS): rc and err as nop_device_run returned
 * them, run its result (whose output the judge may take). */
static void judge_result(judge *j, int i, int rc, const nop_error *err, nop_run_result *run)
{
    nop_test_result *res = j->res;
    if (j->over)
        return;
    if (i == ARGS) {
        pass_on(j->s, err);
        res->status = NOP_TEST_ERRORED;
        note(res, "its arguments cannot be made: %s", err->diag.msg);
        j->over = true;
        return;
    }
    if (i == REF) {
        judge_reference(j, rc, err, run);
        return;
    }
    if (i != j->seen || i >= j->nex) {   /* out of order, or more than were asked for */
        res->status = NOP_TEST_FAILED;
        note(res, "%s: the device process sent a malformed report", j->t->op);
        j->over = true;
        return;
    }
    const execution *e = &j->ex[i];
    j->seen++;
    res->executions++;
    if (rc != 0) {
        pass_on(j->s, err);
        res->status = NOP_TEST_FAILED;
        note(res, "a device rule was broken under %s", e->label);
        note(res, "%s%s%s", err->diag.where, err->diag.where[0] ? ": " : "", err->diag.msg);
        j->over = true;
        return;
    }
    if (!run->output) {   /* "it went well", without the output: not believed */
        res->status = NOP_TEST_FAILED;
        note(res, "%s: the device process sent no output for %s", j->t->op, e->label);
        j->over = true;
        return;
    }
    if (!j->first) {
        j->first = run->output;
        run->output = NULL;
        return;
    }
    const execution *e0 = &j->ex[0];
    char what[256];
    snprintf(what, sizeof what, "the result depends on core %s: %s and %s differ",
             e->cores != e0->cores ? "count" : "order", e0->label, e->label);
    if (!same(run->output, j->first, 0, 0, false, res, what)) {
        res->status = NOP_TEST_FAILED;
        j->over = true;
    }
}

/* After the last result: the case passed only if every execution (and its reference) was
 * reported and agreed, and its output matches the expect file. */
static void judge_end(judge *j)
{
    nop_test_result *res = j->res;
    if (!j->over && (j->seen != j->nex || (j->t->reference && !j->ref_seen))) {
        res->status = NOP_TEST_FAILED;
        note(res, "%s: the device process ended before it reported every execution",
             j->t->op);
        j->over = true;
    }
    if (res->status == NOP_TEST_PASSED && j->t->expect)
        against_file(j->s, j->t, j->first, res);
    nop_tensor_free(j->first);
    j->first = NULL;
    nop_run_result_clear(&j->cur);
}

/* ---- running executions ----------------------------------------------------------------- */

/* Runs execution e of a sub-case (NULL: its reference) on *dev, made for it (when NULL) or
 * renewed as a new one would be: a device's threads, stacks and TCM are made once for all of
 * a sub-case's executions, yet each starts as on a device of its own.  *run gets the result,
 * err the failure; the caller frees *dev. */
static int execute(const suite *s, const nop_testinfo *t, const execution *e, int opi,
                   const nop_value *vals, nop_device **dev, nop_run_result *run, nop_error *err)
{
    nop_device_opts o = { .timeout = s->o->timeout, .diag = s->o->diag,
                          .diag_ctx = s->o->diag_ctx };
    if (e) {
        o.threads = s->o->threads;
        o.cores = e->cores;
        o.schedule = e->schedule;
        o.seed = e->seed;
        o.disabled_checks = s->o->disabled_checks;
    }
    memset(run, 0, sizeof *run);
    if (*dev ? nopi_device_renew(*dev, &o, err) != 0 : new_device(s, &o, dev, err) != 0)
        return -1;
    if (e)
        return nop_device_run(*dev, s->lib, opi, vals, t->nargs, run, err);
    int ref = nop_library_find_reference(s->lib, t->reference);
    return ref < 0 ? nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no reference function '%s'",
                               t->reference)
                   : nop_device_run_reference(*dev, s->lib, ref, vals, t->nargs, run, err);
}

/* A tensor argument that reads as a number (2.5, inf) was left as written when the manifest
 * was read before the op was known (a C++ library's, manifest_tests.c): it is a file of
 * that name in the library folder, as every other argument file is, and must stay inside
 * it (a red team's find: it was read from the working folder, outside the check).  Points
 * argv[a] at the path, which files[a] owns.  0, or -1 with err filled. */
static int argument_files(const suite *s, const nop_testinfo *t, const char **argv,
                          char **files, nop_error *err)
{
    int i = nop_library_find_op(s->lib, t->op);
    nop_opinfo op;
    if (i < 0 || nop_library_op(s->lib, i, &op) != 0 || !s->folder)
        return 0;   /* (nop_values_parse says what is wrong with the op) */
    for (int a = 0; a < t->nargs && a < op.nargs; a++) {
        if (op.args[a] != NOP_ARG_TENSOR || !nopi_number_like(argv[a]))
            continue;
        if (!(files[a] = nopi_path_join(s->folder, argv[a])))
            return nopi_nomem(err);
        char resolved[2048];
        if (!nopi_confine_within(s->folder, files[a], resolved, sizeof resolved))
            return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "argument file '%s' is outside "
                             "the library folder (it resolves to '%s')", argv[a], resolved);
        argv[a] = files[a];
    }
    return 0;
}

/* Receives the result of execution i (REF, ARGS) of a part of a sub-case. */
typedef void report_fn(void *ctx, int i, int rc, const nop_error *err, nop_run_result *run);

/* What one process runs of a sub-case: its executions or its reference, each result handed
 * to report(ctx, ...) as it ends; stops after the first that fails.  The arguments are made
 * here, from the case (the same seed gives the same values in every process).  They run on
 * shared (a worker's own device, renewed for each; it stays the caller's) or, when NULL, on
 * a device made for them. */
static void run_part(const suite *s, const nop_testinfo *t, const int *pick, bool reference,
                     nop_device *shared, report_fn *report, void *ctx)
{
    const char *argv[NOP_MAX_ARGS];
    char *files[NOP_MAX_ARGS] = { 0 };
    for (int a = 0; a < t->nargs; a++)
        argv[a] = t->alts[a][pick[a]];
    int opi;
    nop_value *vals = NULL;
    nop_tensor **tensors = NULL;
    nop_error err;
    nop_run_result run;
    memset(&run, 0, sizeof run);
    if (argument_files(s, t, argv, files, &err) != 0 ||
        nop_values_parse(s->lib, t->op, t->nargs, argv, s->o->seed, &opi, &vals, &tensors,
                         &err) != 0) {
        report(ctx, ARGS, -1, &err, &run);
        nop_values_free(vals, tensors, t->nargs);   /* what was made before the failure */
        for (int a = 0; a < t->nargs; a++)
            free(files[a]);
        return;
    }
    for (int a = 0; a < t->nargs; a++)
        free(files[a]);
    nop_device *dev = shared;
    if (reference) {
        int rc = execute(s, t, NULL, opi, vals, &dev, &run, &err);
        report(ctx, REF, rc, &err, &run);
        nop_run_result_clear(&run);
    } else {
        execution ex[16 * 40];
        int nex = plan(s, t, ex, (int)NOPI_ARRAY_LEN(ex));
        for (int i = 0; i < nex; i++) {
            int rc = execute(s, t, &ex[i], opi, vals, &dev, &run, &err);
            report(ctx, i, rc, &err, &run);
            nop_run_result_clear(&run);
            if (rc != 0)
                break;   /* the device is not run again after a failure */
        }
    }
    if (dev != shared)
        nop_device_free(dev);
    nop_values_free(vals, tensors, t->nargs);
}

static void report_here(void *ctx, int i, int rc, const nop_error *err, nop_run_result *run)
{
    judge_result(ctx, i, rc, err, run);
}

/* ---- sub-cases in worker processes ------------------------------------------------------ */

enum { REC_END = NOPI_REC_USER };

/* How an execution ended; its result's records came before it. */
struct end_rec {
    int32_t index, rc;
    nop_error err;
};

/* A child's state: the suite and manifest as they were at the fork, and the library, which
 * each child loads for itself (so no case sees another's globals). */
typedef struct case_server {
    suite s;
    nop_test_opts o;           /* the caller's, with diagnostics sent to it */
    const nop_manifest *m;
} case_server;

/* A request: which case, which alternative of each argument, and whether it is the case's
 * executions or its reference. */
typedef struct case_req {
    int32_t test, reference;
    int32_t pick[NOP_MAX_ARGS];
} case_req;

/* In the worker: sends an execution's result and how it ended. */
static void report_to_parent(void *ctx, int i, int rc, const nop_error *err,
                             nop_run_result *run)
{
    nopi_wire *w = ctx;
    struct end_rec e;
    memset(&e, 0, sizeof e);
    e.index = i;
    e.rc = rc;
    if (rc != 0)
        e.err = *err;
    if (nopi_wire_put_run(w, run) == 0)
        nopi_wire_put(w, REC_END, &e, sizeof e);
    /* an output that went by reference to its pages must stay untouched until the parent has
     * read them: it is left to end with the request.  One that was copied is freed now, and
     * the next execution's output takes its pages: faulting in fresh ones for each of a
     * case's executions cost more than copying them (128 faults for 512 KiB, 2 ms here) */
    if (!nopi_wire_copies(w))
        run->output = NULL;
}

/* Names t's op as the library does: a test may name a C++ library's op as run does, ns::op
 * (register.c), and every report, phase and request says its own name (a reviewer's find:
 * "my_ops::my_ops::relu"). */
static void canonical_op(const nop_library *lib, nop_testinfo *t)
{
    int i = nop_library_find_op(lib, t->op);
    nop_opinfo op;
    if (i >= 0 && nop_library_op(lib, i, &op) == 0)
        t->op = op.name;   /* the library's: valid as long as it is open */
}

/* In a child, before its request comes: loads the library (each child its own, so no case
 * sees another's globals), while the request before runs. */
static int prepare_case(void *ctx, nopi_wire *w, nop_error *err)
{
    case_server *cs = ctx;
    nop_library *opened;   /* ends with the child */
    if (!cs->s.lib->handle)   /* its constructors may hang: bounded as a shape function is */
        nopi_wire_phase(w, NOPI_PHASE_LOAD, 0, "");
    return (cs->s.lib = nopi_library_runnable(cs->s.lib, &opened, err)) ? 0 : -1;
}

static int serve_case(nop_device *cdev, void *ctx, const void *data, size_t len, nopi_wire *w,
                      nop_error *err)
{
    case_server *cs = ctx;
    case_req rq;
    if (len != sizeof rq)
        return nopi_fault(err, NOP_FAULT_HOST, "a malformed request");
    memcpy(&rq, data, sizeof rq);
    nop_testinfo t;
    nop_manifest_test(cs->m, rq.test, &t);
    canonical_op(cs->s.lib, &t);
    cs->s.wire = w;
    cs->o = *cs->s.o;
    cs->o.diag = nopi_wire_diag;
    cs->o.diag_ctx = w;
    cs->s.o = &cs->o;
    /* the child's own device: its threads and stacks are ready, made before the request */
    run_part(&cs->s, &t, rq.pick, rq.reference != 0, cdev, report_to_parent, w);
    return 0;   /* the child ends: the library goes with it */
}

/* In the caller: a result's records, then how it ended. */
static int take_case(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    judge *j = ctx;
    if (type != REC_END)
        return nopi_run_take(&j->cur, type, data, len, own) == 0 ? 0 : -1;
    struct end_rec e;
    if (len != sizeof e || nopi_run_taken(&j->cur) != 0)
        return -1;
    memcpy(&e, data, sizeof e);
    nopi_diag_terminate(&e.err.diag);
    judge_result(j, e.index, e.rc != 0 ? -1 : 0, &e.err, &j->cur);
    nop_run_result_clear(&j->cur);
    return 0;
}

/* The request for a part of sub-case (test, pick). */
static case_req part_request(const nop_testinfo *t, int test, const int *pick, bool reference)
{
    case_req rq = { test, reference, { 0 } };
    for (int a = 0; a < t->nargs && a < NOP_MAX_ARGS; a++)
        rq.pick[a] = pick[a];
    return rq;
}

/* The most cores a run of the part uses, whose time limits its worker's deadline adds up:
 * one for a reference or an op that is not multicore, else its executions' largest count. */
static int request_cores(const judge *j, bool reference)
{
    if (reference || !nop_library_multicore(j->s->lib))
        return 1;
    int most = 1;
    for (int i = 0; i < j->nex; i++) {
        int c = j->ex[i].cores ? j->ex[i].cores : nop_profile_cores(j->s->profile);
        most = c > most ? c : most;
    }
    return most;
}

/* Runs the part of a sub-case that rq asks for in a worker in its library's loaded state
 * (posted: rq went with nopi_server_post, and its records are read now): a kernel that kills
 * its worker fails the case, and a reference that does is the case's ERROR (as a reference
 * that fails in place is).  false when the worker failed so. */
static bool run_part_isolated(nopi_server *srv, judge *j, const case_req *rq, bool posted)
{
    nop_error err;
    bool reference = rq->reference != 0;
    double budget = 10.0;   /* loading the library and making the arguments */
    int runs = reference ? 1 : j->nex;
    char name[256];   /* as the worker's phases name it */
    nopi_op_qualname(j->s->lib, j->t->op, name, sizeof name);
    if (nopi_server_call(srv, name, budget, runs, request_cores(j, reference),
                         posted ? NULL : rq, posted ? 0 : sizeof *rq, take_case, j, &err) == 0)
        return true;
    nop_run_result_clear(&j->cur);
    if (!j->over && reference) {   /* the test's own code failed, as when it crashes in place */
        judge_result(j, REF, -1, &err, &j->cur);
    } else if (!j->over) {
        pass_on(j->s, &err);
        j->res->status = NOP_TEST_FAILED;
        note(j->res, "%s%s%s", err.diag.where, err.diag.where[0] ? ": " : "", err.diag.msg);
        j->over = true;
    }
    return false;
}

/* Runs one sub-case on every execution and fills res: in this process, or (srv) its
 * executions in a worker of the kernels' server (srv[0]) and its reference in one of the
 * references' (srv[1]), so that neither sees the other's answer.  In workers the reference
 * runs while the executions do (on another CPU: with one, after them), and its records are
 * read after theirs, as in this process: the verdict, and the order of what is reported, are
 * the same.  Its request was posted before the executions', so it has their time on top of
 * its own limit; when the executions fail it is given up unread, and its child killed. */
static void run_case(const suite *s, nopi_server *const *srv, int test, const nop_testinfo *t,
                     const int *pick, nop_test_result *res)
{
    double t0 = nopi_now();
    execution ex[16 * 40];
    judge j = { s, t, ex, plan(s, t, ex, (int)NOPI_ARRAY_LEN(ex)), 0, NULL, false, false,
                res, { 0 } };
    res->status = NOP_TEST_PASSED;
    if (!srv) {
        run_part(s, t, pick, false, NULL, report_here, &j);
        if (!j.over && t->reference)
            run_part(s, t, pick, true, NULL, report_here, &j);
    } else {
        case_req kernels = part_request(t, test, pick, false);
        case_req ref = part_request(t, test, pick, true);
        bool posted = t->reference && s->alongside &&
                      nopi_server_post(srv[1], &ref, sizeof ref, NULL) == 0;
        if (run_part_isolated(srv[0], &j, &kernels, false) && !j.over && j.seen == j.nex &&
            t->reference)
            run_part_isolated(srv[1], &j, &ref, posted);
        else
            nopi_server_forget(srv[1]);
    }
    judge_end(&j);
    res->seconds = nopi_now() - t0;
}

/* The device and fork servers of an isolated suite, one for its kernels and one for its
 * references (a process that has run a kernel never runs the reference that judges it).
 * Each case runs in a fresh child of each zygote, forked from a process that ran no user
 * code, and killed before the next case's child gets its request.  A child put back between
 * cases (nopi_server_reuse, as a Python session's is) would be only as clean as its own
 * restore, which code that ran in it can subvert (a review's thread, passing for the
 * watchdog a kept child then had in the count of its threads, took the next case's request
 * and answered it; a write into the snapshot's own copy still lives on).  A reference's
 * answer is no less a part of the verdict than a kernel's: a shape function of another op
 * did that to an honest reference, and wrong kernels passed.  0, or -1 with err filled. */
static int start_servers(const suite *s, const nop_manifest *m, nop_device **dev,
                         case_server *cs, nopi_server **srv, nop_error *err)
{
    /* the threads of the executions' devices: a child's own device serves them all */
    nop_device_opts o = { .threads = s->o->threads, .timeout = s->o->timeout,
                          .diag = s->o->diag, .diag_ctx = s->o->diag_ctx, .isolate = true };
    *cs = (case_server){ *s, *s->o, m };
    if (nop_device_new(dev, s->profile, &o, err) != 0)
        return -1;
    /* the manifest's folder: a library built elsewhere (--build-dir) cannot say which folder
     * its arguments' files are in */
    char *folder = nopi_dirname(nop_manifest_path(m));
    if (!folder) {
        nop_device_free(*dev);
        *dev = NULL;
        return nopi_nomem(err);
    }
    for (int i = 0; i < 2; i++) {
        /* (the judge holds the first execution's output, the current one's and the
         * reference's) */
        if (nopi_server_new(&srv[i], *dev, serve_case, cs, err) != 0 ||
            nopi_server_library(srv[i], s->lib->path, err) != 0 ||
            nopi_server_folder(srv[i], folder, err) != 0) {
            free(folder);
            nopi_server_free(srv[0]);
            if (i == 1)
                nopi_server_free(srv[1]);
            srv[0] = srv[1] = NULL;
            nop_device_free(*dev);
            *dev = NULL;
            return -1;
        }
        nopi_server_prepare(srv[i], prepare_case);
        nopi_server_outputs_held(srv[i], 3);
    }
    free(folder);
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
    if (nop_manifest_check_cores(m, profile, err) != 0)
        return -1;
    /* on one CPU a reference alongside would only take the executions' time: one that
     * computes for a while could make an honest kernel miss its time limit (and so it would
     * under a container's limit of fewer than two CPUs, whatever CPUs its mask shows) */
    bool more = opts->isolate && nop_cpus_usable() >= NOP_TEST_ALONGSIDE_CPUS;
    char *folder = nopi_dirname(nop_manifest_path(m));
    if (!folder)
        return nopi_nomem(err);
    suite s = { lib, profile, opts, NULL, more, folder };
    nop_device *dev = NULL;
    nopi_server *srv[2] = { NULL, NULL };
    case_server cs;
    if (opts->isolate && start_servers(&s, m, &dev, &cs, srv, err) != 0) {
        free(folder);
        return -1;
    }
    nop_test_result *res = malloc(sizeof *res);
    if (!res) {
        nopi_server_free(srv[0]);
        nopi_server_free(srv[1]);
        nop_device_free(dev);
        free(folder);
        return nopi_nomem(err);
    }
    /* sub-case k of the suite, counted in manifest order, is shard k mod N + 1's: a case of
     * many sub-cases is split too (by case, a library of one such case ran all of it in one
     * shard and nothing in the others: a new user's find); another shard's sub-cases are
     * its own to report, not skipped ones of this shard's */
    long k = 0;
    for (int i = 0; i < nop_manifest_test_count(m); i++) {
        nop_testinfo t;
        nop_manifest_test(m, i, &t);
        canonical_op(lib, &t);
        /* every combination of the arguments' alternatives, like an odometer */
        int pick[NOP_MAX_ARGS] = { 0 };
        for (;;) {
            bool in_shard = k++ % nshards == shard - 1;
            memset(res, 0, sizeof *res);
            case_label(&t, pick, res->label, sizeof res->label);
            res->op = t.op;
            res->status = NOP_TEST_SKIPPED;
            /* the filter reads the label the reports give: a failed sub-case is run again
             * by its name[v1, v2] */
            if (in_shard && (!opts->filter || strstr(res->label, opts->filter)))
                run_case(&s, opts->isolate ? srv : NULL, i, &t, pick, res);
            int *count[] = { &sum->passed, &sum->failed, &sum->errored, &sum->skipped };
            if (in_shard)
                (*count[res->status])++;
            if (in_shard && opts->on_result)
                opts->on_result(opts->ctx, res);
            int a = t.nargs - 1;
            while (a >= 0 && ++pick[a] == t.nalts[a])
                pick[a--] = 0;
            if (a < 0)
                break;
        }
    }
    free(res);
    nopi_server_free(srv[0]);
    nopi_server_free(srv[1]);
    nop_device_free(dev);
    free(folder);
    return 0;
}
