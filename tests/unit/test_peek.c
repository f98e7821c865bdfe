/* Unit tests of nop_library_peek_ops: a built library's op names read from its file agree
 * with what loading it says, and files that are not libraries, cut short or damaged, give an
 * error and never a read outside the file (ASan runs this too). */
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
    lib = unit_build(dir, "name: peek\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
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

static void names_match_the_loaded_library(void **state)
{
    char **names;
    int n;
    nop_error err;
    assert_int_equal(nop_library_peek_ops(nop_library_path(lib), &names, &n, &err), 0);
    assert_int_equal(n, nop_library_op_count(lib));
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        nop_opinfo op;
        nop_library_op(lib, i, &op);
        assert_string_equal(names[i], op.name);
    }
    assert_string_equal(names[1], "second_op");
    nop_names_free(names, n);
}

static void a_text_file_is_not_a_library(void **state)
{
    char **names = (char **)1;
    int n = 7;
    nop_error err;
    const char *path = write_bytes("text.so", "not ELF\n", 8);
    assert_int_equal(nop_library_peek_ops(path, &names, &n, &err), -1);
    assert_null(names);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.diag.msg, "is not a neuronop op library"));
    assert_int_equal(nop_library_peek_ops("/no/such/lib.so", &names, &n, &err), -1);
    assert_non_null(strstr(err.diag.msg, "cannot read '/no/such/lib.so'"));
}

/* Every prefix of the file: an error or the right names, never a read past the end. */
static void a_file_cut_short_is_refused(void **state)
{
    for (size_t len = 0; len < image_len; len += len < 256 ? 1 : 97) {
        char *copy = malloc(len ? len : 1);   /* exactly len bytes: ASan sees any overrun */
        assert_non_null(copy);
        memcpy(copy, image, len);
        char **names;
        int n;
        nop_error err;
        const char *path = write_bytes("cut.so", copy, len);
        if (nop_library_peek_ops(path, &names, &n, &err) == 0) {
            assert_int_equal(n, 3);
            nop_names_free(names, n);
        }
        free(copy);
    }
}

/* Damage every byte in turn (to 0xff): whatever the result, no crash and no bad read. */
static void a_damaged_file_never_reads_outside_it(void **state)
{
    char *copy = malloc(image_len);
    assert_non_null(copy);
    for (size_t at = 0; at < image_len; at += at < 4096 ? 1 : 13) {
        memcpy(copy, image, image_len);
        copy[at] = (char)0xff;
        char **names;
        int n;
        nop_error err;
        if (nop_library_peek_ops(write_bytes("bad.so", copy, image_len), &names, &n, &err) == 0)
            nop_names_free(names, n);
    }
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_match_the_loaded_library),
        cmocka_unit_test(a_text_file_is_not_a_library),
        cmocka_unit_test(a_file_cut_short_is_refused),
        cmocka_unit_test(a_damaged_file_never_reads_outside_it),
    };
    return cmocka_run_group_tests_name("peek", tests, setup, teardown);
}
