/* Unit tests of nop_library_describe: a built library's self-description read from its file
 * agrees with what loading it says, its code is not there to run, and files that are not
 * libraries, cut short or damaged, give an error and never a read outside the file (ASan
 * runs this too). */
#include <fcntl.h>
#include <sys/stat.h>

#include "unit.h"

static const char *const kernels =
    "#include <neuronop.h>\n"
    "nt_tensor *k1(const nt_tensor *t) { return get_dst_tensor(); }\n"
    "nt_tensor *k2(const nt_tensor *t, int64_t n) { return get_dst_tensor(); }\n";
static const char *const shapes =
    "#include <neuronop.h>\n"
    "nt_tensor *same(const nt_tensor *t) {\n"
    "    return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }\n"
    "nt_tensor *same2(const nt_tensor *t, int64_t n) {\n"
    "    return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }\n";

static const char *dir;
static nop_library *lib;
static char *image;     /* the built library file's bytes */
static size_t image_len;

static int setup(void **state)
{
    dir = unit_tmpdir();
    lib = unit_build(dir, "name: described\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
                     "ops:\n  first_op: {args: [tensor], shape: same, kernel: k1}\n"
                     "  second_op: {args: [tensor, int64], shape: same2, kernel: k2}\n"
                     "  third_op: {args: [tensor], shape: same, kernel: k1}\n",
                     kernels, shapes, false);
    if (!lib)
        return -1;
    FILE *f = fopen(nop_library_path(lib), "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        return -1;
    image_len = (size_t)ftell(f);
    rewind(f);
    image = malloc(image_len);
    bool ok = image && fread(image, 1, image_len, f) == image_len;
    fclose(f);
    return ok ? 0 : -1;
}

static int teardown(void **state)
{
    nop_library_close(lib);
    free(image);
    unit_cleanup(dir);
    return 0;
}

/* Writes len bytes of data to dir/name and returns its path (static storage). */
static const char *write_bytes(const char *name, const char *data, size_t len)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    return path;
}

static void describes_what_loading_gives(void **state)
{
    nop_library *d;
    nop_error err;
    assert_int_equal(nop_library_describe(&d, nop_library_path(lib), &err), 0);
    assert_int_equal(nop_library_op_count(d), 3);
    nop_opinfo op;
    nop_library_op(d, 1, &op);
    assert_string_equal(op.name, "second_op");
    char *a = nop_library_json(lib), *b = nop_library_json(d);
    assert_string_equal(a, b);   /* every field, read from the file as the loader maps it */
    free(a);
    free(b);
    /* its code is not there until a run needs it: the run loads it, then runs it */
    nop_profile *profile;
    nop_device *dev;
    nop_run_result r;
    nop_tensor *t;
    assert_int_equal(nop_profile_load(&profile, "trn1", unit_share_dir(), &err), 0);
    nop_device_opts o = { .disabled_checks = NOP_CHECK_ALL };   /* k1 writes nothing */
    assert_int_equal(nop_device_new(&dev, profile, &o, &err), 0);
    assert_int_equal(nop_tensor_generate(&t, "zeros:4", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    if (nop_device_run(dev, d, 0, &v, 1, &r, &err) != 0)
        fail_msg("%s: %s", err.diag.where, err.diag.msg);
    assert_int_equal(nop_tensor_numel(r.output), 4);
    nop_run_result_clear(&r);
    nop_tensor_free(t);
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(d);
}

/* A red team's find: `neuronop test` loads the library it described once per child, and a
 * rebuild during the run gave one case's kernel and reference different builds.  A file
 * replaced since it was described (the same bytes, another file) is not run; nor is one
 * rewritten in place with its size and modification time kept (cp -p: a reviewer's). */
static void a_library_replaced_since_it_was_described_is_not_run(void **state)
{
    nop_library *d;
    nop_error err;
    char copy[512];
    assert_int_equal(nop_library_describe(&d, nop_library_path(lib), &err), 0);
    snprintf(copy, sizeof copy, "%s/rebuilt.so", dir);
    write_bytes("rebuilt.so", image, image_len);
    assert_int_equal(rename(copy, nop_library_path(lib)), 0);
    nop_profile *profile;
    nop_device *dev;
    nop_run_result r;
    nop_tensor *t;
    assert_int_equal(nop_profile_load(&profile, "trn1", unit_share_dir(), &err), 0);
    nop_device_opts o = { .disabled_checks = NOP_CHECK_ALL };
    assert_int_equal(nop_device_new(&dev, profile, &o, &err), 0);
    assert_int_equal(nop_tensor_generate(&t, "zeros:4", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    assert_int_equal(nop_device_run(dev, d, 0, &v, 1, &r, &err), -1);
    assert_non_null(strstr(err.diag.msg, "changed (was it rebuilt?) since neuronop read it"));
    nop_run_result_clear(&r);
    nop_library_close(d);
    /* in place, the same size and modification time: only its change time tells */
    struct stat before;
    assert_int_equal(nop_library_describe(&d, nop_library_path(lib), &err), 0);
    assert_int_equal(stat(nop_library_path(lib), &before), 0);
    FILE *f = fopen(nop_library_path(lib), "r+b");
    assert_non_null(f);
    assert_int_equal(fwrite(image, 1, image_len, f), image_len);
    fclose(f);
    struct timespec times[2] = { before.st_atim, before.st_mtim };
    assert_int_equal(utimensat(AT_FDCWD, nop_library_path(lib), times, 0), 0);
    assert_int_equal(nop_device_run(dev, d, 0, &v, 1, &r, &err), -1);
    assert_non_null(strstr(err.diag.msg, "changed (was it rebuilt?) since neuronop read it"));
    nop_run_result_clear(&r);
    nop_tensor_free(t);
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(d);
}

static void a_text_file_is_not_a_library(void **state)
{
    nop_library *d = (nop_library *)1;
    nop_error err;
    const char *path = write_bytes("text.so", "not ELF\n", 8);
    assert_int_equal(nop_library_describe(&d, path, &err), -1);
    assert_null(d);
    assert_non_null(strstr(err.diag.msg, "is not a neuronop op library"));
    assert_int_equal(nop_library_describe(&d, "/no/such/lib.so", &err), -1);
    assert_non_null(strstr(err.diag.msg, "cannot read library '/no/such/lib.so'"));
}

/* Every prefix of the file: an error or the right names, never a read past the end. */
static void a_file_cut_short_is_refused(void **state)
{
    for (size_t len = 0; len < image_len; len += len < 256 ? 1 : 97) {
        char *copy = malloc(len ? len : 1);   /* exactly len bytes: ASan sees any overrun */
        assert_non_null(copy);
        memcpy(copy, image, len);
        nop_library *d;
        nop_error err;
        const char *path = write_bytes("cut.so", copy, len);
        if (nop_library_describe(&d, path, &err) == 0) {
            assert_int_equal(nop_library_op_count(d), 3);
            nop_library_close(d);
        }
        free(copy);
    }
}

/* Damage every byte in turn (to 0xff): whatever the result, no crash and no bad read; and
 * damage inside the self-description itself is said to be that, with what to do. */
static void a_damaged_file_never_reads_outside_it(void **state)
{
    char *copy = malloc(image_len);
    assert_non_null(copy);
    int described_as_damaged = 0;
    for (size_t at = 0; at < image_len; at += at < 4096 ? 1 : 13) {
        memcpy(copy, image, image_len);
        copy[at] = (char)0xff;
        nop_library *d;
        nop_error err;
        if (nop_library_describe(&d, write_bytes("bad.so", copy, image_len), &err) == 0) {
            char *json = nop_library_json(d);   /* every string is there and ends */
            free(json);
            nop_library_close(d);
        } else if (strstr(err.diag.msg, "' has a damaged self-description")) {
            assert_string_equal(err.diag.detail, "rebuild it with 'neuronop build --force'");
            described_as_damaged++;
        }
    }
    assert_true(described_as_damaged > 0);
    free(copy);
}

/* Parameter names for fewer ops than the library has (a damaged file) give names to those
 * ops and none to the rest.  fuzz_library found the reader stepping a null pointer past the
 * last line (tests/fuzz/regressions/library/argnames-fewer-lines-than-ops): undefined
 * behaviour that UndefinedBehaviorSanitizer stops here under make sanitize. */
static void names_for_fewer_ops_than_there_are_give_none_to_the_rest(void **state)
{
    static const char names[] = "t\nt,n\nt\n";   /* k1, k2, k1: a line per op */
    char *copy = malloc(image_len);
    assert_non_null(copy);
    memcpy(copy, image, image_len);
    char *at = memmem(copy, image_len, names, sizeof names);
    assert_non_null(at);
    at[1] = '\0';   /* the first op's line only */
    nop_library *d;
    nop_error err;
    assert_int_equal(nop_library_describe(&d, write_bytes("short.so", copy, image_len), &err),
                     0);
    char buf[32];
    assert_true(nop_library_op_argname(d, 0, 0, buf, sizeof buf));
    assert_string_equal(buf, "t");
    assert_false(nop_library_op_argname(d, 1, 0, buf, sizeof buf));
    assert_false(nop_library_op_argname(d, 2, 0, buf, sizeof buf));
    nop_library_close(d);
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(describes_what_loading_gives),
        cmocka_unit_test(a_library_replaced_since_it_was_described_is_not_run),
        cmocka_unit_test(a_text_file_is_not_a_library),
        cmocka_unit_test(a_file_cut_short_is_refused),
        cmocka_unit_test(a_damaged_file_never_reads_outside_it),
        cmocka_unit_test(names_for_fewer_ops_than_there_are_give_none_to_the_rest),
    };
    return cmocka_run_group_tests_name("describe", tests, setup, teardown);
}
