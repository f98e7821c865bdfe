/* Unit tests of what the Python bridge asks of libneuronop: parameter names recorded in a
 * built library (lib/build/argnames.c), read back whether the library is loaded or only
 * described, tensors over the caller's memory (lib/bridge/wrap.c), and the kind of each
 * failure a confined run reports (lib/bridge/fault.c). */
#include "unit.h"

static const char *const kernels =
    "#include <neuronop.h>\n"
    "nt_tensor *scaled(const nt_tensor *input, double factor);  /* a declaration first */\n"
    "/* scaled(a, b) in a comment */\n"
    "nt_tensor *scaled(const nt_tensor *input,\n"
    "                  double factor)\n"
    "{ return get_dst_tensor(); }\n"
    "nt_tensor *pair(const nt_tensor *grad, const nt_tensor *x) { return get_dst_tensor(); }\n"
    "#define KERNEL(f) nt_tensor *f(const nt_tensor *t, int64_t v) { return get_dst_tensor(); }\n"
    "KERNEL(unnamed)\n";
static const char *const shapes =
    "#include <neuronop.h>\n"
    "nt_tensor *same(const nt_tensor *t) {\n"
    "    return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }\n"
    "nt_tensor *same_d(const nt_tensor *t, double d) { return same(t); }\n"
    "nt_tensor *same_2(const nt_tensor *a, const nt_tensor *b) { return same(a); }\n"
    "nt_tensor *same_i(const nt_tensor *t, int64_t n) { return same(t); }\n";
static const char *const manifest =
    "name: names\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nops:\n"
    "  scaled: {args: [tensor, double], shape: same_d, kernel: scaled}\n"
    "  pair: {args: [tensor, tensor], shape: same_2, kernel: pair}\n"
    "  unnamed: {args: [tensor, int64], shape: same_i, kernel: unnamed}\n";

static void expect_names(const nop_library *lib)
{
    char name[64];
    assert_true(nop_library_op_argname(lib, 0, 0, name, sizeof name));
    assert_string_equal(name, "input");
    assert_true(nop_library_op_argname(lib, 0, 1, name, sizeof name));
    assert_string_equal(name, "factor");
    assert_true(nop_library_op_argname(lib, 1, 0, name, sizeof name));
    assert_string_equal(name, "grad");
    assert_true(nop_library_op_argname(lib, 1, 1, name, sizeof name));
    assert_string_equal(name, "x");
    /* a kernel made by a macro has no definition to read: the shape function's names */
    assert_true(nop_library_op_argname(lib, 2, 1, name, sizeof name));
    assert_string_equal(name, "n");
    /* out of range, or a buffer too small */
    assert_false(nop_library_op_argname(lib, 0, 2, name, sizeof name));
    assert_false(nop_library_op_argname(lib, 3, 0, name, sizeof name));
    assert_false(nop_library_op_argname(lib, 0, 0, name, 3));
}

static void names_come_from_the_definitions(void **state)
{
    const char *dir = unit_tmpdir();
    nop_library *lib = unit_build(dir, manifest, kernels, shapes, false);
    assert_non_null(lib);
    expect_names(lib);
    nop_library *described;
    nop_error err;
    assert_int_equal(nop_library_describe(&described, nop_library_path(lib), &err), 0);
    expect_names(described);
    char *json = nop_library_json(described);
    assert_non_null(strstr(json, "\"argnames\": [\"input\", \"factor\"]"));
    free(json);
    nop_library_close(described);
    nop_library_close(lib);
    unit_cleanup(dir);
}

static void a_tensor_over_the_callers_memory(void **state)
{
    float data[6] = { 1, -2, 3, -4, 5, -6 };
    int64_t sizes[2] = { 2, 3 };
    nop_tensor *t;
    nop_error err;
    assert_int_equal(nop_tensor_wrap(&t, NOP_F32, 2, sizes, data, sizeof data, &err), 0);
    assert_ptr_equal(nop_tensor_data(t), data);
    assert_int_equal(nop_tensor_nbytes(t), sizeof data);
    assert_int_equal(nop_tensor_numel(t), 6);
    assert_true(nop_tensor_get(t, 3) == -4.0);
    nop_tensor_unwrap(t);   /* frees the record, not data (ASan would see a bad free) */
    assert_true(data[5] == -6.0f);
    /* more elements than the memory holds, a bad dtype or rank: refused */
    assert_int_equal(nop_tensor_wrap(&t, NOP_F32, 2, sizes, data, sizeof data - 1, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_null(t);
    assert_int_equal(nop_tensor_wrap(&t, (enum nop_dtype)99, 2, sizes, data, sizeof data,
                                     &err), -1);
    assert_int_equal(nop_tensor_wrap(&t, NOP_F32, 9, sizes, data, sizeof data, &err), -1);
    int64_t wide[5] = { 1, 1, 1, 1, 70000 };   /* 5 dimensions allow at most 65535 each */
    assert_int_equal(nop_tensor_wrap(&t, NOP_F32, 5, wide, data, sizeof data, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    nop_tensor_unwrap(NULL);
}

/* Builds the fixture manifest dir/rel (copied from tests/fixtures) and describes its library,
 * as the supervisor does: the worker loads it. */
static nop_library *fixture(const char *dir, const char *rel)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    nop_manifest *m;
    nop_library *lib = NULL;
    nop_error err;
    nop_build_result res;
    nop_build_opts o = { .share_dir = unit_share_dir() };
    if (nop_manifest_load(&m, path, &err) != 0 || nop_build(m, &o, &res, &err) != 0 ||
        nop_library_describe(&lib, res.lib_path, &err) != 0)
        fail_msg("%s: %s", rel, err.diag.msg);
    nop_manifest_free(m);
    return lib;
}

/* Runs op of lib on ones(4) and returns the kind of its failure (NOP_FAULT_NONE when it
 * did not fail). */
static enum nop_fault fault_of(nop_device *dev, const nop_library *lib, const char *name)
{
    int op = -1;
    for (int i = 0; i < nop_library_op_count(lib); i++) {
        nop_opinfo info;
        nop_library_op(lib, i, &info);
        if (strcmp(info.name, name) == 0)
            op = i;
    }
    assert_true(op >= 0);
    nop_tensor *t;
    nop_error err;
    assert_int_equal(nop_tensor_generate(&t, "ones:4", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    nop_run_result res = { 0 };
    err.kind = NOP_ERR_NONE;
    int rc = nop_device_run(dev, lib, op, &v, 1, &res, &err);
    nop_run_result_clear(&res);
    nop_tensor_free(t);
    return rc == 0 ? NOP_FAULT_NONE : nop_error_fault(&err);
}

/* The kind is the record's, never read from its words: a message that opens as a timeout's
 * does not make one, and a kind out of range (a worker's record is its own account) is read
 * as a broken rule. */
static void the_kind_is_the_records_not_its_words(void **state)
{
    (void)state;
    nop_error err;
    memset(&err, 0, sizeof err);
    err.kind = NOP_ERR_DEVICE;
    snprintf(err.diag.msg, sizeof err.diag.msg, "timeout: the kernel ran for more than 1 s");
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_RULE);
    err.fault = NOP_FAULT_SYSCALL;
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_SYSCALL);
    err.fault = (enum nop_fault)99;
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_RULE);
    err.fault = (enum nop_fault)-1;
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_RULE);
    err.kind = NOP_ERR_INPUT;
    err.fault = NOP_FAULT_CRASH;
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_NONE);
}

/* Every kind of failure, from a kernel that commits it in a confined worker kept for the
 * session, as under the supervisor (the fixtures are the e2e tests' own). */
static void each_failure_has_its_kind(void **state)
{
    const char *dir = unit_tmpdir();
    char cmd[800];
    const char *src = getenv("NEURONOP_SRC");   /* make check runs us from tests/e2e */
    src = src ? src : ".";
    snprintf(cmd, sizeof cmd, "cp -R '%s/tests/fixtures/rules' '%s/tests/fixtures/hostile' '%s'",
             src, src, dir);
    assert_int_equal(system(cmd), 0);
    nop_library *access = fixture(dir, "rules/access.yaml");
    nop_library *crash = fixture(dir, "rules/crash.yaml");
    nop_library *hostile = fixture(dir, "hostile");
    nop_profile *profile;
    nop_device *dev, *hasty;
    nop_error err;
    /* a time limit no run reaches on a busy machine, and a short one for the loops */
    nop_device_opts o = { .isolate = true, .keep_worker = true, .timeout = 30 };
    nop_device_opts ho = { .isolate = true, .keep_worker = true, .timeout = 0.3 };
    assert_int_equal(nop_profile_load(&profile, "trn1", unit_share_dir(), &err), 0);
    assert_int_equal(nop_device_new(&dev, profile, &o, &err), 0);
    assert_int_equal(nop_device_new(&hasty, profile, &ho, &err), 0);

    assert_int_equal(fault_of(dev, access, "tcm_past_end"), NOP_FAULT_RULE);
    assert_int_equal(fault_of(dev, access, "write_input"), NOP_FAULT_RULE);
    assert_int_equal(fault_of(dev, crash, "aborts"), NOP_FAULT_RULE);
    assert_int_equal(fault_of(dev, crash, "segv"), NOP_FAULT_CRASH);
    assert_int_equal(fault_of(dev, crash, "shape_segv"), NOP_FAULT_CRASH);   /* a shape's */
    assert_int_equal(fault_of(dev, crash, "wide_frame"), NOP_FAULT_STACK);
    assert_int_equal(fault_of(dev, crash, "deep"), NOP_FAULT_STACK);
    assert_int_equal(fault_of(hasty, crash, "spin"), NOP_FAULT_TIMEOUT);          /* a core's */
    assert_int_equal(fault_of(hasty, hostile, "shape_spins"), NOP_FAULT_TIMEOUT); /* the worker's */
    assert_int_equal(fault_of(dev, hostile, "forks"), NOP_FAULT_SYSCALL);
    assert_int_equal(fault_of(dev, hostile, "creates"), NOP_FAULT_SYSCALL);
    static const char *const breakers[] = { "exits", "shape_exits", "shape_forges" };
    for (size_t i = 0; i < sizeof breakers / sizeof breakers[0]; i++) {
        enum nop_fault f = fault_of(dev, hostile, breakers[i]);
#ifdef __SANITIZE_ADDRESS__
        /* the worker's sanitizers catch these first, each its own way (t0208) */
        assert_true(f != NOP_FAULT_NONE && f != NOP_FAULT_HOST);
#else
        assert_int_equal(f, NOP_FAULT_WORKER);
#endif
    }
    /* a memset over the runtime's memory ends the worker however the wreck goes on: it
     * dies of a signal, or makes a call seccomp traps; never a rule or a clean run */
    enum nop_fault wreck = fault_of(dev, hostile, "wild_memset");
    assert_true(wreck == NOP_FAULT_WORKER || wreck == NOP_FAULT_SYSCALL ||
                wreck == NOP_FAULT_CRASH);

    /* not a device failure: its kind says what it is */
    nop_run_result res = { 0 };
    assert_int_equal(nop_device_run(dev, crash, 0, NULL, 0, &res, &err), -1);
    nop_run_result_clear(&res);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_NONE);
    assert_int_equal(nop_error_fault(NULL), NOP_FAULT_NONE);

    nop_device_free(dev);
    nop_device_free(hasty);
    nop_profile_free(profile);
    nop_library_close(access);
    nop_library_close(crash);
    nop_library_close(hostile);
    unit_cleanup(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_come_from_the_definitions),
        cmocka_unit_test(a_tensor_over_the_callers_memory),
        cmocka_unit_test(the_kind_is_the_records_not_its_words),
        cmocka_unit_test(each_failure_has_its_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
