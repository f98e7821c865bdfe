/* Unit tests of what the Python bridge asks of libneuronop: parameter names recorded in a
 * built library (lib/build/argnames.c), read back whether the library is loaded or only
 * described, and tensors over the caller's memory (lib/bridge/wrap.c). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_come_from_the_definitions),
        cmocka_unit_test(a_tensor_over_the_callers_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
