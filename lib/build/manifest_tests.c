/*
 * manifest_tests.c - the `tests:` section of a manifest: each case's op, argument values (or
 * lists of values taken in turn), its expected output (a reference function or an expect
 * file), tolerances and core counts, validated like the rest of the manifest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "mload.h"

static const char *const test_keys[] = { "name", "op", "args", "expect", "rtol", "atol",
                                          "cores", "reference", NULL };

/* A case's files stay in the library folder (neuronop-run(1), TRUST): its arguments are made
 * in its worker, which reads only the library folder where the kernel has Landlock, and its
 * expect file is read by neuronop, which shows its values when the case fails.  A file
 * elsewhere (symlinks resolved) is refused here, the same on every machine, rather than
 * failing there with "Permission denied" on some, or reaching a CI log.  kind names the
 * file, why says who reads it. */
static int outside_folder(loader *L, const nopi_test *t, const nopi_ynode *v, const char *kind,
                          const char *written, const char *path, const char *why)
{
    char resolved[2048], also[2100] = "";
    if (nopi_confine_within(L->m->dir, path, resolved, sizeof resolved))
        return 0;
    if (strcmp(written, resolved) != 0)
        snprintf(also, sizeof also, " (it resolves to '%s')", resolved);
    nopi_y_error(L->doc, v, L->err, "%s '%s' of test '%s' is outside the library folder%s",
                 kind, written, t->name, also);
    nopi_detail(L->err, "%s; copy the file there", why);
    return -1;
}

/* A tensor argument that is a generator, or looks meant as one, must be one the worker can
 * make: said here, at its line, rather than when the case runs. */
static int check_generator(loader *L, const nopi_test *t, int i, const nopi_ynode *v,
                           const char *str)
{
    nop_error e = { 0 };
    const char *meant = nop_is_generator(str) ? NULL : nopi_generator_like(str);
    if (meant)
        return nopi_y_error(L->doc, v, L->err, "argument %d of test '%s': '%.*s' is not a "
                            "generator; did you mean '%s'?", i + 1, t->name,
                            (int)strcspn(str, ":"), str, meant);
    if (!nop_is_generator(str) || nopi_generator_check(str, &e) == 0)
        return 0;
    nopi_y_error(L->doc, v, L->err, "argument %d of test '%s': %s", i + 1, t->name,
                 e.diag.msg);
    if (e.diag.detail[0])
        nopi_detail(L->err, "%s", e.diag.detail);
    return -1;
}

/* One argument entry: a value, or a list of values taken in turn; op, when the manifest
 * gives it, says which are tensors. */
static int load_test_arg(loader *L, nopi_test *t, int i, const nopi_ynode *n,
                         const nopi_op *op)
{
    size_t count = n->kind == NOPI_Y_SEQ ? n->n : 1;
    if (n->kind == NOPI_Y_MAP || count == 0)
        return nopi_y_error(L->doc, n, L->err, "argument %d of test '%s' must be a value (a "
                            "generator, a .npy path or a number) or a list of them", i + 1,
                            t->name);
    t->alts[i] = calloc(count + 1, sizeof *t->alts[i]);
    if (!t->alts[i])
        return oom(L);
    for (size_t k = 0; k < count; k++) {
        const nopi_ynode *v = n->kind == NOPI_Y_SEQ ? n->items[k] : n;
        const char *str;
        char what[64];
        snprintf(what, sizeof what, "args[%d]", i);
        if (nopi_y_string(L->doc, v, what, &str, L->err) != 0)
            return -1;
        /* a .npy path is relative to the manifest; generators and numbers are as written.
         * A tensor's argument that is no generator (nor one misspelt) is a path whatever its
         * name, as neuronop run reads it (a red team's find: a file named without '.npy'
         * was read from the working folder, outside the confinement check); where the op is
         * not known yet (a C++ library's come from its registration), a number is not. */
        bool tensor = !op || op->args[i] == NOP_ARG_TENSOR;
        bool generator = nop_is_generator(str) || nopi_generator_like(str);
        bool path = (strlen(str) > 4 && strcmp(str + strlen(str) - 4, ".npy") == 0) ||
                    (tensor && !generator && (op || !nopi_number_like(str)));
        t->alts[i][k] = path ? nopi_path_join(L->m->dir, str) : strdup(str);
        if (!t->alts[i][k])
            return oom(L);
        t->nalts[i] = (int)k + 1;
        if (path && outside_folder(L, t, v, "argument file", str, t->alts[i][k],
                                   "a case's arguments are made by its worker, which reads "
                                   "only the library folder") != 0)
            return -1;
        if (!path && (!op || op->args[i] == NOP_ARG_TENSOR) &&
            check_generator(L, t, i, v, str) != 0)
            return -1;
    }
    return 0;
}

static int load_test_rest(loader *L, nopi_test *t, const nopi_ynode *n, const nopi_op *op);

/* The length in bytes of the control character c starts with, or 0: C0 and DEL, and, UTF-8
 * encoded (as YAML's "\x9b", "\N" and "\L" escapes give them), C1 (U+0080 to U+009F: U+009B
 * is a terminal's CSI, as ESC [ is) and the line and paragraph separators U+2028, U+2029. */
static size_t control_at(const char *c)
{
    const unsigned char *u = (const unsigned char *)c;
    if (u[0] < 0x20 || u[0] == 0x7f)
        return 1;
    if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
        return 2;
    if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
        return 3;
    return 0;
}

static int load_test(loader *L, nopi_test *t, const nopi_ynode *n)
{
    if (nopi_y_expect(L->doc, n, NOPI_Y_MAP, "tests[]", L->err) != 0 ||
        nopi_y_check_keys(L->doc, n, test_keys, "test", L->err) != 0)
        return -1;
    t->pos = pos_of(n);
    const nopi_ynode *v;
    const char *s;
    if (!(v = nopi_y_lookup(n, "name"))) {
        nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, n->line, n->col,
                  "a test lacks required key 'name'");
        return -1;
    }
    if (nopi_y_string(L->doc, v, "name", &s, L->err) != 0)
        return -1;
    /* a name is one line of the report, and [ ] mark a sub-case's values in it */
    bool plain = s[0] != '\0';
    for (const char *c = s; plain && *c; c++)
        plain = !control_at(c) && *c != '[' && *c != ']';
    if (!plain) {
        /* quoted with its control characters as '?': a message stays one line, and a
         * manifest cannot send escape sequences to the terminal */
        char shown[128];
        size_t k = 0;
        for (const char *c = s; *c && k < sizeof shown - 1; c++) {
            size_t len = control_at(c);
            shown[k++] = len ? '?' : *c;
            c += len ? len - 1 : 0;
        }
        shown[k] = '\0';
        return nopi_y_error(L->doc, v, L->err, "test name '%s' must be one non-empty line of "
                            "printable characters, without '[' or ']' (which mark a "
                            "sub-case's values)", shown);
    }
    /* a sub-case's label (name[v1, v2]) fits the reports' 512 bytes with room for values */
    if (strlen(s) > NOPI_MAX_TEST_NAME)
        return nopi_y_error(L->doc, v, L->err, "test name of %zu bytes; a name has at most %d "
                            "(the reports give each sub-case's values after it)", strlen(s),
                            NOPI_MAX_TEST_NAME);
    if (!(t->name = strdup(s)))
        return oom(L);
    for (int i = 0; i < L->m->ntests; i++)
        if (strcmp(L->m->tests[i].name, s) == 0)
            return nopi_y_error(L->doc, v, L->err, "duplicate test '%s' (first at line %d)", s,
                                L->m->tests[i].pos.line);

    if (!(v = nopi_y_lookup(n, "op"))) {
        nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, n->line, n->col,
                  "test '%s' lacks required key 'op'", t->name);
        return -1;
    }
    if (nopi_y_string(L->doc, v, "op", &s, L->err) != 0)
        return -1;
    t->op = -1;
    t->op_pos = pos_of(v);
    if (!(t->opname = strdup(s)))
        return oom(L);
    if (!L->m->ops_given)
        return load_test_rest(L, t, n, NULL);
    const char *names[NOP_MAX_OPS];
    for (int i = 0; i < L->m->nops; i++) {
        names[i] = L->m->ops[i].name;
        if (strcmp(names[i], s) == 0)
            t->op = i;
    }
    if (t->op < 0) {
        const char *hint = nop_closest(s, names, (size_t)L->m->nops);
        return nopi_y_error(L->doc, v, L->err, "test '%s' names op '%s', which the manifest "
                            "does not declare%s%s%s", t->name, s, hint ? "; did you mean '" : "",
                            hint ? hint : "", hint ? "'?" : "");
    }
    return load_test_rest(L, t, n, &L->m->ops[t->op]);
}

/* The rest of a test: its values, expectation and tolerances.  op is NULL when the ops come
 * from the registration: the build checks the argument count then. */
static int load_test_rest(loader *L, nopi_test *t, const nopi_ynode *n, const nopi_op *op)
{
    const nopi_ynode *v;
    const char *s;
    if (!(v = nopi_y_lookup(n, "args"))) {
        if (op && op->nargs) {
            nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, n->line, n->col,
                      "test '%s' lacks required key 'args' (op '%s' takes %d)", t->name,
                      op->name, op->nargs);
            return -1;
        }
    } else {
        if (nopi_y_expect(L->doc, v, NOPI_Y_SEQ, "args", L->err) != 0)
            return -1;
        if (v->n > NOP_MAX_ARGS)
            return nopi_y_error(L->doc, v, L->err, "test '%s' gives %zu arguments; an op "
                                "takes at most %d", t->name, v->n, NOP_MAX_ARGS);
        if (op && (int)v->n != op->nargs)
            return nopi_y_error(L->doc, v, L->err, "test '%s' gives %zu argument%s; op '%s' "
                                "takes %d", t->name, v->n, v->n == 1 ? "" : "s", op->name,
                                op->nargs);
        for (size_t i = 0; i < v->n; i++)
            if (load_test_arg(L, t, (int)i, v->items[i], op) != 0)
                return -1;
        /* every combination is a sub-case, each made before any runs: a few lists of a
         * thousand values would be millions, and gigabytes before -k could leave them out */
        double subs = 1;
        for (size_t i = 0; i < v->n; i++)
            subs *= t->nalts[i];
        if (subs > NOPI_MAX_SUBCASES)
            return nopi_y_error(L->doc, v, L->err, "test '%s' has %.0f sub-cases (every "
                                "combination of its argument lists), more than %d: split it "
                                "into tests of fewer values", t->name, subs,
                                NOPI_MAX_SUBCASES);
    }
    t->nargs = op ? op->nargs : v ? (int)v->n : 0;
    if ((v = nopi_y_lookup(n, "expect"))) {
        if (nopi_y_string(L->doc, v, "expect", &s, L->err) != 0)
            return -1;
        /* read by neuronop test, not here: a missing test file must not stop a build */
        if (!(t->expect = nopi_path_join(L->m->dir, s)))
            return oom(L);
        if (outside_folder(L, t, v, "expect file", s, t->expect, "neuronop test shows a "
                           "case's expected values when it fails, and reads them only from "
                           "the library folder") != 0)
            return -1;
    }
    if ((v = nopi_y_lookup(n, "reference"))) {
        if (t->expect)
            return nopi_y_error(L->doc, v, L->err, "test '%s' gives both 'reference' and "
                                "'expect'; keep one", t->name);
        if (nopi_y_string(L->doc, v, "reference", &s, L->err) != 0)
            return -1;
        if (!nopi_is_identifier(s))
            return nopi_y_error(L->doc, v, L->err, "'reference' of test '%s' must name a C "
                                "function, not '%s'", t->name, s);
        if (nopi_is_glue_name(s))
            return nopi_manifest_glue_name(L, v, s);
        if (L->m->nreference == 0)
            return nopi_y_error(L->doc, v, L->err, "test '%s' names reference function '%s', "
                                "but the manifest has no reference_srcs to define it in",
                                t->name, s);
        /* one function, one signature: it may serve several tests of ops with the same args */
        for (int i = 0; i < L->m->ntests; i++) {
            const nopi_test *o = &L->m->tests[i];
            if (op && o->reference && strcmp(o->reference, s) == 0 &&
                (L->m->ops[o->op].nargs != L->m->ops[t->op].nargs ||
                 memcmp(L->m->ops[o->op].args, L->m->ops[t->op].args,
                        sizeof L->m->ops[t->op].args) != 0))
                return nopi_y_error(L->doc, v, L->err, "reference '%s' serves op '%s' (line "
                                    "%d) and op '%s', whose args differ; give each its own "
                                    "reference function", s, L->m->ops[o->op].name,
                                    o->reference_pos.line, op->name);
        }
        if (!(t->reference = strdup(s)))
            return oom(L);
        t->reference_pos = pos_of(v);
    }
    t->rtol = t->atol = -1;
    if ((v = nopi_y_lookup(n, "rtol")) && nopi_y_double(L->doc, v, "rtol", 0, 1e9, &t->rtol,
                                                       L->err) != 0)
        return -1;
    if ((v = nopi_y_lookup(n, "atol")) && nopi_y_double(L->doc, v, "atol", 0, 1e300, &t->atol,
                                                       L->err) != 0)
        return -1;
    /* as run refuses --rtol without --expect: a tolerance with nothing to apply to is a
     * mistake (a case's executions are compared with each other exactly) */
    if (!t->expect && !t->reference &&
        ((v = nopi_y_lookup(n, "rtol")) || (v = nopi_y_lookup(n, "atol"))))
        return nopi_y_error(L->doc, v, L->err, "test '%s' gives a tolerance but neither "
                            "'expect' nor 'reference': its executions are compared exactly; "
                            "add one, or leave the tolerance out", t->name);
    if ((v = nopi_y_lookup(n, "cores"))) {
        if (!L->m->multicore)
            return nopi_y_error(L->doc, v, L->err, "'cores' applies to multicore libraries "
                                "only; this one runs on one core");
        if (nopi_y_expect(L->doc, v, NOPI_Y_SEQ, "cores", L->err) != 0)
            return -1;
        if (v->n == 0 || v->n > 16)
            return nopi_y_error(L->doc, v, L->err, "'cores' lists 1 to 16 core counts");
        for (size_t i = 0; i < v->n; i++) {
            int64_t c;
            if (nopi_y_int(L->doc, v->items[i], "cores[]", 1, 64, &c, L->err) != 0)
                return -1;
            t->cores_pos[t->ncores] = pos_of(v->items[i]);
            t->cores[t->ncores++] = (int)c;
        }
    }
    return 0;
}

int nopi_manifest_load_tests(loader *L, const nopi_ynode *n)
{
    if (nopi_y_expect(L->doc, n, NOPI_Y_SEQ, "tests", L->err) != 0)
        return -1;
    L->m->tests = calloc(n->n ? n->n : 1, sizeof *L->m->tests);
    if (!L->m->tests)
        return oom(L);
    for (size_t i = 0; i < n->n; i++) {
        int rc = load_test(L, &L->m->tests[i], n->items[i]);
        L->m->ntests = (int)i + 1;
        if (rc != 0)
            return -1;
    }
    return 0;
}

int nop_manifest_check_cores(const nop_manifest *m, const nop_profile *profile, nop_error *err)
{
    int have = nop_profile_cores(profile);
    for (int i = 0; i < m->ntests; i++) {
        const nopi_test *t = &m->tests[i];
        for (int c = 0; c < t->ncores; c++) {
            if (t->cores[c] <= have)
                continue;
            nopi_fail(err, NOP_ERR_INPUT, m->path, t->cores_pos[c].line, t->cores_pos[c].col,
                      "test '%s' runs on %d cores, but device '%s' has %d", t->name,
                      t->cores[c], nop_profile_name(profile), have);
            nopi_detail(err, "list core counts from 1 to %d in its 'cores', or choose a device "
                        "with more (--device)", have);
            return -1;
        }
    }
    return 0;
}
