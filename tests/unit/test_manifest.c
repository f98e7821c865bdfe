/* Unit tests of manifest loading (lib/build/manifest.c, lib/base/yaml.c, lib/build/flags.c). */
#include "unit.h"
#include "build/manifest.h"

static const char *const kernel_src =
    "#include <neuronop.h>\nnt_tensor *k(const nt_tensor *t) { return get_dst_tensor(); }\n";

static nop_manifest *load_text(const char *yaml, nop_error *err, const char **dirp)
{
    const char *dir = unit_tmpdir();
    unit_write(dir, "neuronop.yaml", yaml);
    unit_write(dir, "k.c", kernel_src);
    unit_write(dir, "s.c", "");
    nop_manifest *m = NULL;
    memset(err, 0, sizeof *err);
    int rc = nop_manifest_load(&m, dir, err);
    assert_true(rc == 0 ? m != NULL : m == NULL);
    *dirp = dir;
    return m;
}

#define BASE "name: lib\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
#define OP "ops:\n  op:\n    args: [tensor, scalar, double, int64]\n    shape: s\n    kernel: k\n"

static void loads_a_complete_manifest(void **state)
{
    nop_error err;
    const char *dir;
    nop_manifest *m = load_text(BASE "multicore: true\nbuild_directory: out\n"
                                "extra_cflags: [-DSTACK_SIZE=20000, -O2, -DX=\"a b\"]\n" OP,
                                &err, &dir);
    assert_non_null(m);
    assert_string_equal(nop_manifest_name(m), "lib");
    assert_true(nop_manifest_multicore(m));
    assert_int_equal(nop_manifest_stack_size(m), 20000);
    assert_int_equal(nop_manifest_stack_from(m), NOP_STACK_CFLAGS);
    char expect[300];
    snprintf(expect, sizeof expect, "%s/out", dir);
    assert_string_equal(nop_manifest_build_dir(m), expect);
    nop_opinfo op;
    assert_int_equal(nop_manifest_op(m, 0, &op), 0);
    assert_int_equal(op.nargs, 4);
    assert_int_equal(op.args[0], NOP_ARG_TENSOR);
    assert_int_equal(op.args[3], NOP_ARG_INT64);
    assert_string_equal(op.kernel, "k");
    assert_int_equal(nop_manifest_op(m, 1, &op), -1);
    assert_int_equal(m->nflags, 3);
    assert_int_equal(m->flags[2].kind, NOPI_FLAG_DEFINE);
    assert_string_equal(m->flags[2].value, "\"a b\"");
    nop_manifest_free(m);
    unit_cleanup(dir);
}

static void defaults_apply(void **state)
{
    nop_error err;
    const char *dir;
    nop_manifest *m = load_text(BASE OP, &err, &dir);
    assert_non_null(m);
    assert_false(nop_manifest_multicore(m));
    assert_int_equal(nop_manifest_stack_size(m), NOP_STACK_DEFAULT_BYTES);
    assert_int_equal(nop_manifest_stack_from(m), NOP_STACK_DEFAULT);
    nop_manifest_free(m);
    unit_cleanup(dir);
}

static void same_stack_size_twice_is_fine(void **state)
{
    nop_error err;
    const char *dir;
    nop_manifest *m = load_text(BASE "stack_size: 8192\nextra_cflags: [-DSTACK_SIZE=8192]\n" OP,
                                &err, &dir);
    assert_non_null(m);
    assert_int_equal(nop_manifest_stack_size(m), 8192);
    nop_manifest_free(m);
    unit_cleanup(dir);
}

static void errors_carry_file_line_column(void **state)
{
    nop_error err;
    const char *dir;
    nop_manifest *m = load_text(BASE OP "multicroe: true\n", &err, &dir);
    assert_null(m);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_int_equal(err.diag.line, 9);
    assert_int_equal(err.diag.col, 1);
    assert_non_null(strstr(err.diag.file, "neuronop.yaml"));
    assert_non_null(strstr(err.diag.msg, "did you mean 'multicore'"));
    unit_cleanup(dir);
}

static void missing_manifest_in_folder(void **state)
{
    const char *dir = unit_tmpdir();
    nop_manifest *m;
    nop_error err;
    assert_int_equal(nop_manifest_load(&m, dir, &err), -1);
    assert_null(m);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_non_null(strstr(err.diag.msg, "no neuronop.yaml"));
    unit_cleanup(dir);
}

static void flags_are_classified(void **state)
{
    nopi_flag f;
    char why[256];
    assert_int_equal(nopi_flag_parse("-DA=1", "/d", &f, why, sizeof why), 0);
    assert_int_equal(f.kind, NOPI_FLAG_DEFINE);
    assert_string_equal(f.name, "A");
    assert_string_equal(f.value, "1");
    nopi_flag_clear(&f);
    assert_int_equal(nopi_flag_parse("-DFLAG", "/d", &f, why, sizeof why), 0);
    assert_null(f.value);
    nopi_flag_clear(&f);
    assert_int_equal(nopi_flag_parse("-Iinc", "/d", &f, why, sizeof why), 0);
    assert_int_equal(f.kind, NOPI_FLAG_INCLUDE);
    assert_string_equal(f.value, "/d/inc");
    nopi_flag_clear(&f);
    static const char *const ok[] = { "-O2", "-g", "-w", "-Wall", "-Werror", "-std=c11",
                                      "-funsigned-char", "-UNDEBUG", "-ffast-math",
                                      "-fvisibility=hidden", "-fno-strict-aliasing",
                                      "-fdebug-prefix-map=/src=.", "-fmax-errors=3" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(nopi_flag_parse(ok[i], "/d", &f, why, sizeof why), 0);
        nopi_flag_clear(&f);
    }
    static const char *const bad[] = { "-D", "-D1X", "-U", "-I", "-Wl,-z", "-Wl", "-m32",
                                       "-lm", "-L/x", "-shared", "-o", "x.c", "-", "-gx",
                                       "-b", "-O2 -g", "-D A", "-run", "-std=",
                                       "-fplugin=./p.so", "-fplugin-arg-p-x=1",
                                       "-fprofile-generate", "-fprofile-use=/x.gcda",
                                       "-fauto-profile=x", "-fdump-tree-all",
                                       "-fopt-info-all=/tmp/o", "-fsanitize=address",
                                       "-finstrument-functions", "-flto",
                                       "-fdiagnostics-format=json", "-fstack-usage",
                                       "-fsome-future-option=/etc/passwd", "-fmodules-ts",
                                       "-fmodule-mapper=map.txt", "-fmodule-mapper=|prog",
                                       "-fcompare-debug", "-fno-show-column",
                                       "-fno-diagnostics-show-caret", "-fmessage-length=40",
                                       "-fno-sanitize=all" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        assert_int_equal(nopi_flag_parse(bad[i], "/d", &f, why, sizeof why), -1);
        assert_true(why[0] != '\0');
    }
}

static void stack_sizes_are_checked(void **state)
{
    int64_t v;
    char why[256];
    assert_int_equal(nopi_stack_size_parse("409600", "STACK_SIZE", &v, why, sizeof why), 0);
    assert_int_equal(v, 409600);
    assert_int_equal(nopi_stack_size_parse("409601", "STACK_SIZE", &v, why, sizeof why), -1);
    assert_int_equal(nopi_stack_size_parse("0", "STACK_SIZE", &v, why, sizeof why), -1);
    assert_int_equal(nopi_stack_size_parse("-5", "STACK_SIZE", &v, why, sizeof why), -1);
    assert_int_equal(nopi_stack_size_parse("12k", "STACK_SIZE", &v, why, sizeof why), -1);
    assert_int_equal(nopi_stack_size_parse(NULL, "STACK_SIZE", &v, why, sizeof why), -1);
}

static void closest_suggests_near_words_only(void **state)
{
    static const char *const words[] = { "compute_srcs", "shape_srcs", "multicore" };
    assert_string_equal(nop_closest("compute_src", words, 3), "compute_srcs");
    assert_string_equal(nop_closest("multicroe", words, 3), "multicore");
    assert_null(nop_closest("optimise", words, 3));
    /* an abbreviation beats a nearer spelling of another name */
    const char *ops[] = { "relu_tcm", "relu_forward", "relu_backward" };
    assert_string_equal(nop_closest("relu_fwd", ops, 3), "relu_forward");
    assert_string_equal(nop_closest("relu_bwd", ops, 3), "relu_backward");
    assert_string_equal(nop_closest("relu_tmc", ops, 3), "relu_tcm");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loads_a_complete_manifest),
        cmocka_unit_test(defaults_apply),
        cmocka_unit_test(same_stack_size_twice_is_fine),
        cmocka_unit_test(errors_carry_file_line_column),
        cmocka_unit_test(missing_manifest_in_folder),
        cmocka_unit_test(flags_are_classified),
        cmocka_unit_test(stack_sizes_are_checked),
        cmocka_unit_test(closest_suggests_near_words_only),
    };
    return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
