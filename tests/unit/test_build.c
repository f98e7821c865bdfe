/* Unit tests of building and loading libraries (lib/build/build.c, lib/device/library.c,
 * lib/base/elfsyms.c). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "base/elfsyms.h"
#include "build/builder.h"
#include "build/gen.h"
#include "base/internal.h"
#include "build/manifest.h"

static const char *const manifest =
    "name: unit\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nextra_cflags: [-DSTACK_SIZE=12000]\n"
    "ops:\n  scale:\n    args: [tensor, double]\n    shape: scale_shape\n    kernel: scale\n";
static const char *const kernel =
    "#include <neuronop.h>\n#include \"k.h\"\n"
    "nt_tensor *scale(const nt_tensor *t, double f) { return get_dst_tensor(); }\n";
static const char *const shape =
    "#include <neuronop.h>\n#include <stdlib.h>\n"
    "nt_tensor *scale_shape(const nt_tensor *t, double f) {\n"
    "    free(malloc(1)); /* host code may use libc */\n"
    "    return nt_zeros(nt_dim(t), nt_sizes(t), NT_F32);\n}\n";

static const char *setup_lib(void)
{
    const char *dir = unit_tmpdir();
    unit_write(dir, "neuronop.yaml", manifest);
    unit_write(dir, "k.c", kernel);
    unit_write(dir, "k.h", "#define K 1\n");
    unit_write(dir, "s.c", shape);
    return dir;
}

static int build(const char *dir, bool force, nop_build_result *res, nop_error *err)
{
    nop_manifest *m;
    if (nop_manifest_load(&m, dir, err) != 0)
        return -1;
    nop_build_opts o = { .share_dir = unit_share_dir(), .force = force };
    int rc = nop_build(m, &o, res, err);
    nop_manifest_free(m);
    return rc;
}

static void builds_then_is_up_to_date(void **state)
{
    const char *dir = setup_lib();
    nop_build_result res;
    nop_error err;
    assert_int_equal(build(dir, false, &res, &err), 0);
    assert_false(res.up_to_date);
    assert_int_equal(res.compiled, 2);
    struct stat st;
    assert_int_equal(stat(res.lib_path, &st), 0);

    assert_int_equal(build(dir, false, &res, &err), 0);
    assert_true(res.up_to_date);
    assert_int_equal(res.compiled, 0);

    assert_int_equal(build(dir, true, &res, &err), 0);   /* --force */
    assert_false(res.up_to_date);

    unit_write(dir, "k.h", "#define K 2\n");   /* a header the build can see */
    assert_int_equal(build(dir, false, &res, &err), 0);
    assert_false(res.up_to_date);
    unit_cleanup(dir);
}

static void failed_build_keeps_old_library_and_is_retried(void **state)
{
    const char *dir = setup_lib();
    nop_build_result res;
    nop_error err;
    assert_int_equal(build(dir, false, &res, &err), 0);
    char before[33], after[33];
    assert_int_equal(nopi_hash_file(res.lib_path, before), 0);

    unit_write(dir, "k.c", "nt_tensor *scale(const nt_tensor *t, double f) { return 0 }\n");
    for (int attempt = 0; attempt < 2; attempt++) {
        assert_int_equal(build(dir, false, &res, &err), -1);
        assert_int_equal(err.kind, NOP_ERR_COMPILE);
        assert_int_equal(res.compiled, 1);   /* never cached: compiled again */
        assert_non_null(strstr(err.diag.file, "k.c"));
        assert_int_equal(err.diag.line, 1);
    }
    assert_int_equal(nopi_hash_file(res.lib_path, after), 0);
    assert_string_equal(before, after);

    /* back to the sources the library on disk was built from: it is current again */
    unit_write(dir, "k.c", kernel);
    assert_int_equal(build(dir, false, &res, &err), 0);
    assert_true(res.up_to_date);
    unit_cleanup(dir);
}

/* Notes a build reports, for the test below. */
static void keep_note(void *ctx, const nop_diag *d)
{
    if (d->severity == NOP_SEV_NOTE)
        memcpy(ctx, d->msg, sizeof d->msg);
}

/* Another build holding the folder's lock: this one says it waits, then gives up at its
 * timeout naming the lock, and leaves the library alone. */
static void a_held_lock_times_out_naming_the_lock(void **state)
{
    const char *dir = setup_lib();
    char path[1024];
    snprintf(path, sizeof path, "%s/build", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/build/.neuronop.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0666);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);

    nop_manifest *m;
    nop_error err;
    assert_int_equal(nop_manifest_load(&m, dir, &err), 0);
    char note[sizeof err.diag.msg] = "";
    nop_build_opts o = { .share_dir = unit_share_dir(), .lock_timeout = 0.05,
                         .diag = keep_note, .diag_ctx = note };
    nop_build_result res;
    assert_int_equal(nop_build(m, &o, &res, &err), -1);
    nop_manifest_free(m);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_non_null(strstr(err.diag.msg, "another build of '"));
    assert_non_null(strstr(err.diag.msg, "' has held its lock for 0 s"));
    assert_non_null(strstr(err.diag.detail, path));
    assert_non_null(strstr(note, "waiting for another build of '"));
    snprintf(path, sizeof path, "%s/build/libunit.so", dir);
    assert_int_equal(access(path, F_OK), -1);   /* nothing was built meanwhile */
    close(fd);
    unit_cleanup(dir);
}

static void library_describes_itself(void **state)
{
    const char *dir = setup_lib();
    nop_build_result res;
    nop_error err;
    assert_int_equal(build(dir, false, &res, &err), 0);
    nop_library *a, *b;
    assert_int_equal(nop_library_open(&a, res.lib_path, &err), 0);
    assert_int_equal(nop_library_open(&b, res.lib_path, &err), 0);   /* twice is fine */
    assert_string_equal(nop_library_name(a), "unit");
    assert_int_equal(nop_library_stack_size(a), 12000);
    assert_false(nop_library_multicore(a));
    assert_int_equal(nop_library_op_count(a), 1);
    assert_int_equal(nop_library_find_op(a, "scale"), 0);
    assert_int_equal(nop_library_find_op(a, "nope"), -1);
    nop_opinfo op;
    assert_int_equal(nop_library_op(a, 0, &op), 0);
    assert_int_equal(op.nargs, 2);
    assert_int_equal(op.args[1], NOP_ARG_DOUBLE);
    assert_string_equal(op.shape, "scale_shape");
    char *json = nop_library_json(a);
    assert_non_null(strstr(json, "\"stack_size_from\": \"extra_cflags\""));
    assert_non_null(strstr(json, "\"args\": [\"tensor\", \"double\"]"));
    free(json);
    nop_library_close(a);
    nop_library_close(b);
    unit_cleanup(dir);
}

static void open_refuses_other_files(void **state)
{
    const char *dir = unit_tmpdir();
    unit_write(dir, "x.so", "not an ELF file");
    char path[300];
    snprintf(path, sizeof path, "%s/x.so", dir);
    nop_library *lib;
    nop_error err;
    assert_int_equal(nop_library_open(&lib, path, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    snprintf(path, sizeof path, "%s/missing.so", dir);
    assert_int_equal(nop_library_open(&lib, path, &err), -1);
    assert_non_null(strstr(err.diag.msg, "cannot read"));
    unit_cleanup(dir);
}

static void object_symbols_are_read(void **state)
{
    const char *dir = setup_lib();
    nop_build_result res;
    nop_error err;
    assert_int_equal(build(dir, false, &res, &err), 0);
    /* the built .so is not an object; reading a non-relocatable still lists symbols, but a
     * text file is refused */
    char path[300];
    snprintf(path, sizeof path, "%s/k.c", dir);
    nopi_elfsym *syms;
    size_t n;
    assert_int_equal(nopi_elfsyms_read(path, &syms, &n, &err), -1);
    assert_non_null(strstr(err.diag.msg, "not an ELF64 object"));
    unit_cleanup(dir);
}

/* The trampolines may use only %r11: %rax carries the vector-register count of a variadic
 * call, and clobbering it made printf lose its doubles whenever the table's address ended in
 * a zero byte. */
static void trampolines_keep_argument_registers(void **state)
{
    nop_error err;
    const char *dir = setup_lib();
    nop_manifest *m;
    assert_int_equal(nop_manifest_load(&m, dir, &err), 0);
    nopi_gen_source src = { "k.c", "k.c", NOPI_ROLE_COMPUTE, "0" };
    nopi_gen_info info = { .m = m, .sources = &src, .nsources = 1, .build_key = "key" };
    char *glue = nopi_gen_glue(&info);
    assert_non_null(glue);
    assert_non_null(strstr(glue, "tcm_malloc: movq nt__api(%rip), %r11; jmp *"));
    static const char *const forbidden[] = { "%rax", "%eax", "%al", "%rdi", "%rsi", "%rdx",
                                              "%rcx", "%r8", "%r9", "%rsp", "%xmm" };
    for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
        assert_null(strstr(glue, forbidden[i]));
    free(glue);
    nop_manifest_free(m);
    unit_cleanup(dir);
}

static void device_symbols(void **state)
{
    assert_true(nopi_device_symbol_allowed("memcpy"));
    assert_true(nopi_device_symbol_allowed("expf"));
    assert_true(nopi_device_symbol_allowed("exp"));
    assert_true(nopi_device_symbol_allowed("tcm_malloc"));
    assert_true(nopi_device_symbol_allowed("nt_printf"));
    assert_true(nopi_device_symbol_allowed("nt__get_f32"));
    assert_false(nopi_device_symbol_allowed("fopen"));
    assert_false(nopi_device_symbol_allowed("malloc"));
    assert_false(nopi_device_symbol_allowed("printf"));   /* must come through neuronop.h */
    assert_false(nopi_device_symbol_allowed("expx"));
    assert_false(nopi_device_symbol_allowed("pthread_create"));
}

/* What nopi_user_includes finds, from the file's text alone: quoted names beside the
 * including file, then in the include folders; <names> in the include folders; nested
 * includes; not a line comment's; a toolchain header is not followed. */
static void includes_are_found_without_a_preprocessor(void **state)
{
    (void)state;
    const char *dir = unit_tmpdir();
    char sub[512], incdir[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(incdir, sizeof incdir, "%s/incdir", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(mkdir(incdir, 0755), 0);
    unit_write(dir, "k.c", "#include \"a.h\"\n  #  include <inc.h>\n// #include \"old.h\"\n"
                           "#include \"missing.h\"\n#include <stdio.h>\n#define X 1\n");
    unit_write(dir, "a.h", "\xef\xbb\xbf#include \"sub/b.inc\"\n");   /* after a BOM */
    unit_write(dir, "sub/b.inc", "#include \"c.h\"   /* beside b.inc */\n");
    unit_write(dir, "sub/c.h", "/* a leaf */\n");
    unit_write(dir, "old.h", "\n");
    unit_write(dir, "incdir/inc.h", "#include_next <inc.h>\n");
    unit_write(dir, "m.c", "#define H \"a.h\"\n#include H\n");
    char src[512], macro[512];
    snprintf(src, sizeof src, "%s/k.c", dir);
    snprintf(macro, sizeof macro, "%s/m.c", dir);
    const char *sources[] = { src }, *macros[] = { macro }, *dirs[] = { incdir };
    char **paths;
    size_t n;
    bool computed;
    assert_int_equal(nopi_user_includes(sources, 1, dirs, 1, &paths, &n, &computed), 0);
    assert_false(computed);
    const char *want[] = { "a.h", "incdir/inc.h", "sub/b.inc", "sub/c.h" };
    char *real = realpath(dir, NULL);
    assert_non_null(real);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        char expect[1024];
        snprintf(expect, sizeof expect, "%s/%s", real, want[i]);
        assert_string_equal(paths[i], expect);
        free(paths[i]);
    }
    free(paths);
    assert_int_equal(nopi_user_includes(macros, 1, dirs, 1, &paths, &n, &computed), 0);
    assert_true(computed);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(real);
    unit_cleanup(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builds_then_is_up_to_date),
        cmocka_unit_test(failed_build_keeps_old_library_and_is_retried),
        cmocka_unit_test(a_held_lock_times_out_naming_the_lock),
        cmocka_unit_test(library_describes_itself),
        cmocka_unit_test(open_refuses_other_files),
        cmocka_unit_test(object_symbols_are_read),
        cmocka_unit_test(trampolines_keep_argument_registers),
        cmocka_unit_test(device_symbols),
        cmocka_unit_test(includes_are_found_without_a_preprocessor),
    };
    return cmocka_run_group_tests_name("build", tests, NULL, NULL);
}
