/* Unit tests of the check on a linked library (lib/base/elfsyms.c,
 * nopi_elf_library_load_code): the loader may run nothing of it but the toolchain's own
 * entries.  Each library is linked here by the system's cc from a small source, since the
 * build refuses such code in every object before it links (the check is its second line). */
#include <elf.h>
#include <sys/wait.h>

#include "unit.h"
#include "base/elfsyms.h"

/* Links source into dir/name.so with cc -shared; the image is returned (free it), *len its
 * size. */
static char *linked(const char *dir, const char *name, const char *source, size_t *len)
{
    char src[64], so[512], cmd[1400];
    snprintf(src, sizeof src, "%.32s.c", name);
    unit_write(dir, src, source);
    snprintf(so, sizeof so, "%s/%s.so", dir, name);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -o '%s' '%s/%s'", so, dir, src);
    int status = system(cmd);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *data;
    assert_int_equal(nopi_read_file(so, &data, len), 0);
    return data;
}

/* What the check says of source linked alone: its return, and its description in what. */
static int check(const char *dir, const char *name, const char *source, char *what, size_t size)
{
    size_t len;
    char *data = linked(dir, name, source, &len);
    what[0] = '\0';
    int rc = nopi_elf_library_load_code(data, len, what, size);
    free(data);
    return rc;
}

static void a_plain_library_runs_nothing_at_load(void **state)
{
    const char *dir = unit_tmpdir();
    char what[256];
    assert_int_equal(check(dir, "plain", "float twice(float x) { return 2 * x; }\n", what,
                           sizeof what), 0);
    unit_cleanup(dir);
}

static void code_the_loader_runs_is_named(void **state)
{
    const char *dir = unit_tmpdir();
    char what[256];
    assert_int_equal(check(dir, "ctor", "int seen;\n"
                           "__attribute__((constructor)) static void at_load(void) "
                           "{ seen = 1; }\n", what, sizeof what), 1);
    assert_string_equal(what, "a constructor 'at_load' in its init array");
    assert_int_equal(check(dir, "dtor", "int seen;\n"
                           "__attribute__((destructor)) static void at_unload(void) "
                           "{ seen = 1; }\n", what, sizeof what), 1);
    assert_string_equal(what, "a destructor 'at_unload' in its fini array");
    assert_int_equal(check(dir, "ifunc", "static int one(void) { return 1; }\n"
                           "static void *pick(void) { return (void *)one; }\n"
                           "int chosen(void) __attribute__((ifunc(\"pick\")));\n", what,
                           sizeof what), 1);
    assert_non_null(strstr(what, "indirect function"));
    assert_int_equal(check(dir, "gmon", "void __gmon_start__(void) { }\n", what, sizeof what),
                     1);
    assert_string_equal(what, "a definition of '__gmon_start__', which its _init calls");
    unit_cleanup(dir);
}

/* GNU ld refuses a preinit array in a shared library; another linker could write one, so
 * the check reads a library whose init array is retyped as one. */
static void a_preinit_array_is_refused(void **state)
{
    const char *dir = unit_tmpdir();
    size_t len;
    char *data = linked(dir, "early", "int seen;\n"
                        "__attribute__((constructor)) static void at_load(void) "
                        "{ seen = 1; }\n", &len);
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    bool retyped = false;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, data + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_INIT_ARRAY) {
            sh.sh_type = SHT_PREINIT_ARRAY;
            memcpy(data + eh.e_shoff + i * sizeof sh, &sh, sizeof sh);
            retyped = true;
        }
    }
    assert_true(retyped);
    char what[64];
    assert_int_equal(nopi_elf_library_load_code(data, len, what, sizeof what), 1);
    assert_string_equal(what, "a preinit array");
    free(data);
    unit_cleanup(dir);
}

static void only_a_shared_library_is_read(void **state)
{
    char what[64];
    assert_int_equal(nopi_elf_library_load_code(UNIT_LITERAL("not an ELF file"), what,
                                                sizeof what), -1);
    size_t len;
    char *self;   /* this program: an executable, not a library */
    assert_int_equal(nopi_read_file("/proc/self/exe", &self, &len), 0);
    assert_int_equal(nopi_elf_library_load_code(self, len / 2, what, sizeof what), -1);
    free(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_plain_library_runs_nothing_at_load),
        cmocka_unit_test(code_the_loader_runs_is_named),
        cmocka_unit_test(a_preinit_array_is_refused),
        cmocka_unit_test(only_a_shared_library_is_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
