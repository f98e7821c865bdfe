/* Unit tests of what compiler children may touch (lib/build/confine.c): paths that must stay
 * in the library folder, the files a dependency list names, and diagnostics about files a
 * build may not read. */
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "build/confine.h"

static char top[256], lib[300], outside[300];

/* lib/ with src/ and a link out; outside/ beside it with a secret */
static void make_tree(void)
{
    snprintf(top, sizeof top, "%s", unit_tmpdir());
    snprintf(lib, sizeof lib, "%s/lib", top);
    snprintf(outside, sizeof outside, "%s/outside", top);
    assert_int_equal(mkdir(lib, 0755), 0);
    assert_int_equal(mkdir(outside, 0755), 0);
    unit_write(outside, "secret.h", "int secret;\n");
    char p[700];
    snprintf(p, sizeof p, "%s/src", lib);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/out", lib);
    assert_int_equal(symlink("../outside", p), 0);
}

static bool within(const char *rel)
{
    char p[700], r[2048];
    snprintf(p, sizeof p, "%s/%s", lib, rel);
    return nopi_confine_within(lib, p, r, sizeof r);
}

static void paths_stay_in_the_folder(void **state)
{
    make_tree();
    assert_true(within("build"));              /* not there yet */
    assert_true(within("src"));
    assert_true(within("."));
    assert_true(within("new/a/../b"));         /* the part to create, normalised */
    assert_false(within("out"));               /* a symlink out */
    assert_false(within("out/build"));
    assert_false(within(".."));
    assert_false(within("../outside"));
    assert_false(within("new/../../x"));       /* climbs out of what exists */
    assert_false(within("src/../../outside"));
    assert_false(nopi_confine_within(lib, "/", NULL, 0));
    char r[2048];
    char p[700];
    snprintf(p, sizeof p, "%s/out", lib);
    assert_false(nopi_confine_within(lib, p, r, sizeof r));
    assert_non_null(strstr(r, "/outside"));    /* says where it leads */
    unit_cleanup(top);
}

static void confine_for(nopi_confine *c)
{
    memset(c, 0, sizeof *c);
    nopi_confine_read(c, lib);
    assert_int_equal(nopi_confine_resolve(c), 0);
}

static void dependency_lists_are_checked(void **state)
{
    make_tree();
    nopi_confine c;
    confine_for(&c);
    char deps[1200], bad[1024];
    snprintf(deps, sizeof deps, "k.o: %s/src/k.cpp \\\n %s/src/k.h /usr/include/stdio.h\n",
             lib, lib);
    unit_write(lib, "ok.d", deps);
    snprintf(deps, sizeof deps, "%s/ok.d", lib);
    assert_false(nopi_confine_deps(&c, deps, bad, sizeof bad));
    snprintf(deps, sizeof deps, "k.o: %s/src/k.cpp \\\n %s/secret.h\n", lib, outside);
    unit_write(lib, "bad.d", deps);
    snprintf(deps, sizeof deps, "%s/bad.d", lib);
    assert_true(nopi_confine_deps(&c, deps, bad, sizeof bad));
    assert_non_null(strstr(bad, "outside/secret.h"));
    nopi_confine_free(&c);
    unit_cleanup(top);
}

static void diagnostics_never_quote_outside(void **state)
{
    make_tree();
    nopi_confine c;
    confine_for(&c);
    nop_diag d = { .severity = NOP_SEV_ERROR, .line = 1 };
    snprintf(d.file, sizeof d.file, "%s/secret.h", outside);
    snprintf(d.msg, sizeof d.msg, "'int' unexpected");
    snprintf(d.detail, sizeof d.detail, "In file included from k.c:3:");
    assert_true(nopi_confine_diag(&c, &d));
    assert_string_equal(d.file, "k.c");      /* at the including line */
    assert_int_equal(d.line, 3);
    assert_non_null(strstr(d.msg, "is outside the library folder"));
    assert_null(strstr(d.detail, "int secret"));
    /* libtcc's words when Landlock refused the open */
    nop_diag e = { .severity = NOP_SEV_ERROR, .line = 2 };
    snprintf(e.file, sizeof e.file, "%s/src/k.c", lib);
    snprintf(e.msg, sizeof e.msg, "include file '../out/secret.h' not found");
    assert_true(nopi_confine_diag(&c, &e));
    assert_non_null(strstr(e.msg, "'../out/secret.h' (it resolves to '"));
    /* a message about the library's own file is left alone */
    nop_diag f = { .severity = NOP_SEV_ERROR, .line = 1 };
    snprintf(f.file, sizeof f.file, "%s/src/k.c", lib);
    snprintf(f.msg, sizeof f.msg, "include file 'missing.h' not found");
    assert_false(nopi_confine_diag(&c, &f));
    assert_string_equal(f.msg, "include file 'missing.h' not found");
    nopi_confine_free(&c);
    unit_cleanup(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths_stay_in_the_folder),
        cmocka_unit_test(dependency_lists_are_checked),
        cmocka_unit_test(diagnostics_never_quote_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
