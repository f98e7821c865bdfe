/* Unit tests of the test engine (lib/test/testrun.c) and of op values from strings
 * (lib/device/values.c), driven through the library API with no CLI. */
#include "unit.h"

/* What a suite reported, case by case. */
typedef struct seen {
    int n;
    char label[16][512];
    enum nop_test_status status[16];
    char message[16][2048];
    int executions[16];
    int errors;                 /* error diagnostics sent to the sink */
} seen;

static void on_result(void *ctx, const nop_test_result *r)
{
    seen *s = ctx;
    if (s->n < 16) {
        snprintf(s->label[s->n], sizeof s->label[0], "%s", r->label);
        s->status[s->n] = r->status;
        snprintf(s->message[s->n], sizeof s->message[0], "%s", r->message);
        s->executions[s->n] = r->executions;
    }
    s->n++;
}

static void on_diag(void *ctx, const nop_diag *d)
{
    if (d->severity == NOP_SEV_ERROR)
        ((seen *)ctx)->errors++;
}

/* Loads and builds the library at path, runs its tests with opts' filter and shard, and
 * fills *s and *sum. */
static void run_suite(const char *path, const char *filter, int shard, int nshards, seen *s,
                      nop_test_summary *sum)
{
    nop_manifest *m;
    nop_library *lib;
    nop_profile *profile;
    nop_error err;
    nop_build_result br;
    nop_build_opts bo = { .share_dir = unit_share_dir() };
    assert_int_equal(nop_manifest_load(&m, path, &err), 0);
    assert_int_equal(nop_build(m, &bo, &br, &err), 0);
    assert_int_equal(nop_library_open(&lib, br.lib_path, &err), 0);
    assert_int_equal(nop_profile_load(&profile, "trn1", unit_share_dir(), &err), 0);
    memset(s, 0, sizeof *s);
    nop_test_opts o = { .filter = filter, .shard = shard, .nshards = nshards, .shuffles = 1,
                        .threads = 2, .diag = on_diag, .diag_ctx = s, .on_result = on_result,
                        .ctx = s };
    assert_int_equal(nop_test_run(m, lib, profile, &o, sum, &err), 0);
    nop_profile_free(profile);
    nop_library_close(lib);
    nop_manifest_free(m);
}

/* The shipped multicore relu passes every case on 1, 3 and 8 cores in every order. */
static void example_passes(void **state)
{
    char path[600];
    snprintf(path, sizeof path, "%s/examples/relu_multicore", unit_share_dir());
    seen s;
    nop_test_summary sum;
    run_suite(path, NULL, 0, 0, &s, &sum);
    assert_int_equal(sum.failed + sum.errored, 0);
    assert_true(sum.passed >= 5);
    assert_int_equal(s.n, sum.passed);
    assert_string_equal(s.label[0], "forward_odd_sizes[randn:1]");
    /* 3 core counts x (sequential, reversed, parallel, 1 shuffle) */
    assert_int_equal(s.executions[0], 12);
    assert_int_equal(s.errors, 0);
}

/* A kernel that is wrong for negative inputs fails against its reference; one whose result
 * depends on the core count fails as such; a filter and a shard skip the rest. */
static const char *const wrong_kernels =
    "#include <neuronop.h>\n"
    "nt_tensor *ident(const nt_tensor *t) {\n"
    "    nt_tensor *o = get_dst_tensor();\n"
    "    nt_tcm_accessor in = nt_tcm_accessor_of(t), out = nt_tcm_accessor_of(o);\n"
    "    float *b = tcm_malloc(4 * nt_numel(t));\n"
    "    uint32_t id = get_cpu_id(), n = get_cpu_count();\n"
    "    int64_t part = nt_numel(t) / n, begin = part * id;\n"
    "    if (id == n - 1) part = nt_numel(t) - begin;\n"
    "    nt_tensor_to_tcm(&in, b, begin, part);\n"
    "    for (int64_t i = 0; i < part; i++) b[i] += (float)n;\n"   /* depends on n */
    "    nt_tcm_to_tensor(&out, b, begin, part);\n"
    "    tcm_free(b);\n"
    "    return o;\n"
    "}\n";
static const char *const wrong_shapes =
    "#include <neuronop.h>\n"
    "nt_tensor *same(const nt_tensor *t) {\n"
    "    return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }\n";

static void failures_are_reported(void **state)
{
    const char *dir = unit_tmpdir();
    unit_write(dir, "ref.c", "#include <neuronop.h>\n"
               "nt_tensor *ident_ref(const nt_tensor *t) {\n"
               "    nt_tensor *o = nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t));\n"
               "    nt_accessor a = nt_accessor_of(t), b = nt_accessor_of(o);\n"
               "    for (int64_t i = 0; i < nt_numel(t); i++)\n"
               "        nt_set_f32(&b, nt_get_f32(&a, i), i);\n"
               "    return o;\n"
               "}\n");
    nop_library *lib = unit_build(dir, "name: wrong\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
                                  "multicore: true\nreference_srcs: [ref.c]\n"
                                  "ops:\n  ident: {args: [tensor], shape: same, kernel: ident}\n"
                                  "tests:\n"
                                  "  - {name: one_core, op: ident, args: [zeros:8], cores: [1],"
                                  " reference: ident_ref}\n"
                                  "  - {name: counts, op: ident, args: [zeros:8], cores: [1, 2]}\n"
                                  "  - {name: bad_args, op: ident, args: [missing.npy]}\n",
                                  wrong_kernels, wrong_shapes, false);
    assert_non_null(lib);
    nop_library_close(lib);
    seen s;
    nop_test_summary sum;
    run_suite(dir, NULL, 0, 0, &s, &sum);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.status[0], NOP_TEST_FAILED);
    assert_non_null(strstr(s.message[0], "differs from reference 'ident_ref'"));
    assert_int_equal(s.status[1], NOP_TEST_FAILED);
    assert_non_null(strstr(s.message[1], "depends on core count"));
    assert_int_equal(s.status[2], NOP_TEST_ERRORED);
    assert_int_equal(s.errors, 1);   /* the missing file, through the sink (a bad
                                      * generator is the manifest's error, at its line) */
    assert_int_equal(sum.failed, 2);
    assert_int_equal(sum.errored, 1);

    run_suite(dir, "counts", 0, 0, &s, &sum);
    assert_int_equal(sum.skipped, 2);
    assert_int_equal(s.status[0], NOP_TEST_SKIPPED);
    assert_int_equal(s.status[1], NOP_TEST_FAILED);
    run_suite(dir, NULL, 2, 3, &s, &sum);   /* the second of three slices: sub-case 2 */
    assert_int_equal(s.n, 1);                /* the others' are theirs: not reported */
    assert_int_equal(sum.skipped, 0);
    assert_string_equal(s.label[0], "counts");
    assert_int_equal(s.status[0], NOP_TEST_FAILED);
    unit_cleanup(dir);
}

/* Values from strings: numbers by type, and every mistake an input error. */
static void values_from_strings(void **state)
{
    const char *dir = unit_tmpdir();
    nop_library *lib = unit_build(dir, "name: v\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
                                  "ops:\n  f: {args: [tensor, scalar, double, int64], "
                                  "shape: fs, kernel: fk}\n",
                                  "#include <neuronop.h>\nnt_tensor *fk(const nt_tensor *t, "
                                  "nt_scalar s, double d, int64_t i) { return 0; }\n",
                                  "#include <neuronop.h>\nnt_tensor *fs(const nt_tensor *t, "
                                  "nt_scalar s, double d, int64_t i) { return 0; }\n", false);
    assert_non_null(lib);
    int op;
    nop_value *v;
    nop_tensor **t;
    nop_error err;
    const char *good[] = { "ones:2x3", "7", "0.5", "-3" };
    assert_int_equal(nop_values_parse(lib, "f", 4, good, 0, &op, &v, &t, &err), 0);
    assert_int_equal(nop_tensor_numel(v[0].tensor), 6);
    assert_true(v[1].is_int);
    assert_int_equal(v[1].i, 7);
    assert_true(v[2].d == 0.5);
    assert_int_equal(v[3].i, -3);
    nop_values_free(v, t, 4);

    const char *frac[] = { "ones:2", "2.5", "1", "1" };
    assert_int_equal(nop_values_parse(lib, "f", 4, frac, 0, &op, &v, &t, &err), 0);
    assert_false(v[1].is_int);
    assert_true(v[1].d == 2.5);
    nop_values_free(v, t, 4);

    assert_int_equal(nop_values_parse(lib, "f", 2, good, 0, &op, &v, &t, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_string_equal(err.diag.msg, "op 'f' takes 4 arguments, 2 given");
    assert_string_equal(err.diag.detail, "signature: f(tensor, scalar, double, int64)");
    nop_values_free(v, t, 2);

    const char *bad[] = { "ones:2", "1", "1", "1.5" };
    assert_int_equal(nop_values_parse(lib, "f", 4, bad, 0, &op, &v, &t, &err), -1);
    assert_string_equal(err.diag.msg, "argument 4 of op 'f' is an int64: '1.5' is not a whole "
                        "number");
    nop_values_free(v, t, 4);

    assert_int_equal(nop_values_parse(lib, "g", 0, NULL, 0, &op, &v, &t, &err), -1);
    assert_string_equal(err.diag.msg, "no op 'g' in library 'v'; did you mean 'f'?");
    assert_string_equal(err.diag.detail, "its ops: f(tensor, scalar, double, int64)");
    nop_values_free(v, t, 0);
    nop_library_close(lib);
    unit_cleanup(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(example_passes),
        cmocka_unit_test(failures_are_reported),
        cmocka_unit_test(values_from_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
