/* Unit tests of memcheck: a memcheck build through the library API, its line table, the TCM
 * pool under memcheck, and the file helpers its reports use. */
#include <dlfcn.h>

#include "unit.h"
#include "base/internal.h"
#include "device/library.h"

/* Line numbers below count from the first line of this text. */
static const char *const kernels =
    "#include <neuronop.h>\n"                                        /* 1 */
    "static float *fill(float *b, int n) {\n"                        /* 2 */
    "    for (int i = 0; i < n; i++)\n"                              /* 3 */
    "        b[i] = (float)i;\n"                                     /* 4 */
    "    return b;\n"                                                /* 5 */
    "}\n"                                                            /* 6 */
    "nt_tensor *pool(const nt_tensor *t, int64_t extra) {\n"         /* 7 */
    "    /* the whole pool, then two halves: no room for memcheck's gaps */\n"
    "    float *all = tcm_malloc(16384);\n"                          /* 9 */
    "    fill(all, 4096);\n"                                         /* 10 */
    "    tcm_free(all);\n"                                           /* 11 */
    "    float *a = tcm_malloc(8192), *b = tcm_malloc(8192);\n"      /* 12 */
    "    fill(a, 2048 + (int)extra);\n"                              /* 13 */
    "    tcm_free(a);\n"
    "    tcm_free(b);\n"
    "    nt_tensor *out = get_dst_tensor();\n"
    "    nt_accessor o = nt_accessor_of(out);\n"
    "    nt_set_f32(&o, (float)(all != 0) + (a != 0) + (b != 0), 0);\n"
    "    return out;\n"
    "}\n";
static const char *const shapes =
    "#include <neuronop.h>\n"
    "nt_tensor *one(const nt_tensor *t, int64_t extra) { return nt_empty(NT_SHAPE(1), NT_F32); }\n";

static const char *dir;
static nop_library *lib;
static nop_profile *profile;

static int setup(void **state)
{
    dir = unit_tmpdir();
    lib = unit_build(dir, "name: mc\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
                     "ops:\n  pool: {args: [tensor, int64], shape: one, kernel: pool}\n",
                     kernels, shapes, true);
    nop_error err;
    if (!lib || nop_profile_load(&profile, "trn1", unit_share_dir(), &err) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    nop_library_close(lib);
    nop_profile_free(profile);
    unit_cleanup(dir);
    return 0;
}

/* Runs pool with `extra` elements written past the first half; 0 or -1 as the run. */
static int run_pool(int64_t extra, nop_run_result *res, nop_error *err)
{
    nop_device *dev;
    assert_int_equal(nop_device_new(&dev, profile, NULL, err), 0);
    nop_tensor *t;
    assert_int_equal(nop_tensor_generate(&t, "zeros:1", 0, err), 0);
    nop_value v[2] = { { .type = NOP_ARG_TENSOR, .tensor = t },
                       { .type = NOP_ARG_INT64, .i = extra } };
    int rc = nop_device_run(dev, lib, nop_library_find_op(lib, "pool"), v, 2, res, err);
    nop_tensor_free(t);
    nop_device_free(dev);
    return rc;
}

static void memcheck_build_is_marked(void **state)
{
    assert_true(nop_library_memcheck(lib));
    assert_non_null(strstr(nop_library_path(lib), "/build/libmc.memcheck.so"));
    char *json = nop_library_json(lib);
    assert_non_null(strstr(json, "\"memcheck\": true"));
    free(json);
}

/* The gaps between buffers never cost the kernel TCM: a full pool still serves. */
static void a_full_pool_still_serves(void **state)
{
    nop_run_result res;
    nop_error err;
    assert_int_equal(run_pool(0, &res, &err), 0);
    assert_true(nop_tensor_get(res.output, 0) == 3.0);
    nop_run_result_clear(&res);
}

/* One element past the first half lands in the second (no gap fitted): still reported,
 * against the buffer the pointer came from, at the line in fill. */
static void an_overrun_is_reported_at_its_line(void **state)
{
    nop_run_result res;
    nop_error err;
    assert_int_equal(run_pool(1, &res, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_DEVICE);
    assert_string_equal(err.diag.where, "pool: core 0");
    assert_non_null(strstr(err.diag.msg, "out-of-bounds access at "));
    assert_non_null(strstr(err.diag.msg, "k.c:4 in 'fill' (memcheck): 4 bytes at offset 8192 "
                                         "of the 8192-byte TCM buffer from tcm_malloc at "));
    assert_non_null(strstr(err.diag.msg, "k.c:12 in 'pool'"));
    assert_non_null(strstr(err.diag.detail, "    4 |         b[i] = (float)i;"));
    nop_run_result_clear(&res);
}

static void lines_map_code_to_source(void **state)
{
    void *fn = dlsym(lib->handle, "pool");
    assert_non_null(fn);
    nopi_where w;
    assert_true(nopi_lines_find(lib->lines, (uintptr_t)fn, &w));
    assert_string_equal(w.func, "pool");
    assert_int_equal(w.line, 7);
    assert_non_null(strstr(w.file, "k.c"));
    assert_false(nopi_lines_find(lib->lines, 16, &w));   /* not code of the library */
    assert_false(nopi_lines_find(NULL, (uintptr_t)fn, &w));   /* no debug info */
    assert_null(nopi_lines_local(NULL, (uintptr_t)fn, -8));
}

static void lines_of_a_file_without_stabs_are_null(void **state)
{
    unit_write(dir, "not-elf.so", "plain text\n");
    char path[512];
    snprintf(path, sizeof path, "%s/not-elf.so", dir);
    assert_null(nopi_lines_read(path, 0));
    snprintf(path, sizeof path, "%s/missing.so", dir);
    assert_null(nopi_lines_read(path, 0));
}

static void read_line_finds_one_line(void **state)
{
    char big[2000], buf[64], path[512];
    memset(big, 'x', sizeof big - 2);
    big[sizeof big - 2] = '\n';
    big[sizeof big - 1] = '\0';
    unit_write(dir, "lines.txt", big);
    snprintf(path, sizeof path, "%s/lines.txt", dir);
    FILE *f = fopen(path, "a");
    fputs("second\nthird", f);
    fclose(f);
    assert_int_equal(nopi_read_line(path, 2, buf, sizeof buf), 0);   /* after a long line */
    assert_string_equal(buf, "second");
    assert_int_equal(nopi_read_line(path, 3, buf, sizeof buf), 0);   /* no final newline */
    assert_string_equal(buf, "third");
    assert_int_equal(nopi_read_line(path, 1, buf, sizeof buf), 0);   /* cut to fit */
    assert_int_equal(strlen(buf), sizeof buf - 1);
    assert_int_equal(nopi_read_line(path, 4, buf, sizeof buf), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memcheck_build_is_marked),
        cmocka_unit_test(a_full_pool_still_serves),
        cmocka_unit_test(an_overrun_is_reported_at_its_line),
        cmocka_unit_test(lines_map_code_to_source),
        cmocka_unit_test(lines_of_a_file_without_stabs_are_null),
        cmocka_unit_test(read_line_finds_one_line),
    };
    return cmocka_run_group_tests_name("memcheck", tests, setup, teardown);
}
