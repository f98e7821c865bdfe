/* Unit tests of what compiler children may touch (lib/build/confine.c): paths that must stay
 * in the library folder, the files a dependency list names, diagnostics about files a build
 * may not read, and the system calls a compiler child is refused (ccfilter.c). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static atomic_bool racing;

static void *make_and_remove(void *folder)
{
    while (atomic_load(&racing)) {
        mkdir(folder, 0755);
        rmdir(folder);
    }
    return NULL;
}

/* Two builds of one folder: the build folder one makes while the other looks (the lstat
 * between two realpaths) is no reason to call it outside; a CI run of t0011 saw that. */
static void a_folder_made_meanwhile_is_still_inside(void **state)
{
    make_tree();
    char folder[700];
    snprintf(folder, sizeof folder, "%s/race", lib);
    atomic_store(&racing, true);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, make_and_remove, folder), 0);
    int outside_seen = 0;
    for (int i = 0; i < 20000; i++)
        outside_seen += !within("race/build");
    atomic_store(&racing, false);
    pthread_join(t, NULL);
    assert_int_equal(outside_seen, 0);
    /* what cannot be resolved is still named in the message */
    char r[2048], p[700];
    snprintf(p, sizeof p, "%s/dangling", lib);
    assert_int_equal(symlink("nothing-here", p), 0);
    assert_false(nopi_confine_within(lib, p, r, sizeof r));
    assert_string_equal(r, p);
    unit_cleanup(top);
}

static void confine_for(nopi_confine *c)
{
    memset(c, 0, sizeof *c);
    nopi_confine_read(c, lib);
    assert_int_equal(nopi_confine_resolve(c), 0);
}

/* Writes a dependency list into lib and checks it; the verdict, the name in bad. */
static nopi_deps_verdict check_list(nopi_confine *c, const char *text, bool gas,
                                    bool complete, const char *file, char *bad, size_t size)
{
    unit_write(lib, "list.d", text);
    char path[400];
    snprintf(path, sizeof path, "%s/list.d", lib);
    bad[0] = '\0';
    return nopi_confine_deps(c, &(nopi_deps){ path, gas, complete, file }, bad, size);
}

static void dependency_lists_are_checked(void **state)
{
    make_tree();
    nopi_confine c;
    confine_for(&c);
    char text[1200], bad[1024];
    unit_write(lib, "src/k.cpp", "int k;\n");
    unit_write(lib, "src/k.h", "int h;\n");
    snprintf(text, sizeof text, "k.o: %s/src/k.cpp \\\n %s/src/k.h /usr/include/stdio.h\n",
             lib, lib);
    assert_int_equal(check_list(&c, text, false, true, NULL, bad, sizeof bad), NOPI_DEPS_OK);
    snprintf(text, sizeof text, "k.o: %s/src/k.cpp \\\n %s/secret.h\n", lib, outside);
    assert_int_equal(check_list(&c, text, false, true, NULL, bad, sizeof bad),
                     NOPI_DEPS_OUTSIDE);
    assert_non_null(strstr(bad, "outside/secret.h"));
    nopi_confine_free(&c);
    unit_cleanup(top);
}

/* Each writer's escapes are undone before a name is checked: the lists below are spelt as
 * g++ 12 (-MD) and gas 2.40 (--MD) wrote them for files so named.  A name either writer may
 * spell for another (a backslash, a tab, a newline in it) is refused however it is cut: each
 * case has decoys inside the library for the pieces a reader could cut it into (a review
 * embedded a file so, through a tab and through a doubled backslash).  A failed compile made
 * nothing to refuse. */
static void dependency_names_are_read_as_their_writer_wrote_them(void **state)
{
    make_tree();
    nopi_confine c;
    confine_for(&c);
    char text[1200], bad[1024];
    static const char *const plain[] = { "sp ace", "h#ash", "d$ollar" };
    for (size_t i = 0; i < 3; i++)
        unit_write(outside, plain[i], "int secret;\n");
    static const struct { bool gas; const char *written, *name; } readable[] = {
        { false, "sp\\ ace", "sp ace" }, { false, "h\\#ash", "h#ash" },
        { false, "d$$ollar", "d$ollar" }, { true, "sp\\ ace", "sp ace" },
        { true, "h#ash", "h#ash" }, { true, "d$$ollar", "d$ollar" },
    };
    for (size_t i = 0; i < 6; i++) {
        snprintf(text, sizeof text, "k.o: %s/%s\n", outside, readable[i].written);
        assert_int_equal(check_list(&c, text, readable[i].gas, true, NULL, bad, sizeof bad),
                         NOPI_DEPS_OUTSIDE);
        snprintf(text, sizeof text, "%s/%s", outside, readable[i].name);
        assert_string_equal(bad, text);
    }
    /* decoys in the library for what a reader might make of the names below */
    static const char *const decoys[] = { "nl", "t\\", "x\\y", "h\\\\#.h", "h#.h", "end",
                                          "back\\slash", "bs\\ sp" };
    for (size_t i = 0; i < sizeof decoys / sizeof decoys[0]; i++)
        unit_write(lib, decoys[i], "int decoy;\n");
    static const struct { bool gas; const char *written; } odd[] = {
        { true, "nl\nine" },                  /* gas: a newline as it is */
        { true, "t\\\t/usr/include/stdio.h" }, /* gas: a tab after a backslash */
        { true, "x\\\\y" },                   /* gas: x\\y, two backslashes, as they are */
        { true, "end\\\\" },                  /* gas: a final backslash doubled */
        { false, "h\\\\#.h" },                /* g++: h\#.h, its backslash and its \# */
        { false, "end\\" },                   /* g++: a final backslash as it is */
        { false, "back\\slash" },             /* g++: a backslash as it is */
        { false, "bs\\\\\\ sp" },             /* g++: bs\ sp, before a space doubled */
        { false, "t\\\tab" },                 /* g++: a tab after a backslash */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        snprintf(text, sizeof text, "k.o: %s/%s\n", lib, odd[i].written);
        assert_int_equal(check_list(&c, text, odd[i].gas, true, NULL, bad, sizeof bad),
                         NOPI_DEPS_UNREADABLE);
        assert_int_equal(check_list(&c, text, odd[i].gas, false, NULL, bad, sizeof bad),
                         NOPI_DEPS_OK);
    }
    /* no list at all: nothing to go by when the compile succeeded */
    char missing[400];
    snprintf(missing, sizeof missing, "%s/none.d", lib);
    assert_int_equal(nopi_confine_deps(&c, &(nopi_deps){ missing, false, true, NULL }, bad,
                                       sizeof bad), NOPI_DEPS_UNLISTED);
    assert_int_equal(nopi_confine_deps(&c, &(nopi_deps){ missing, false, false, NULL }, bad,
                                       sizeof bad), NOPI_DEPS_OK);
    nopi_confine_free(&c);
    unit_cleanup(top);
}

/* gas lists the source by the bare name of its .file directive, resolved where neuronop
 * runs: nothing there is no read, and a file of that name outside cannot be told from one
 * (.incbin "k.cpp" lists the same name); the compile's own temporary folder is its own. */
static void the_assemblers_own_names(void **state)
{
    make_tree();
    nopi_confine c;
    confine_for(&c);
    char tmp[400], text[1200], bad[1024], cwd[1024];
    snprintf(tmp, sizeof tmp, "%s/build-tmp", lib);
    assert_int_equal(mkdir(tmp, 0755), 0);
    c.write = tmp;
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(top), 0);   /* neuronop's folder, outside the library */
    snprintf(text, sizeof text, "k.o: k.cpp %s/ccGone.s\n", tmp);
    assert_int_equal(check_list(&c, text, true, true, "k.cpp", bad, sizeof bad),
                     NOPI_DEPS_OK);
    unit_write(top, "k.cpp", "int other;\n");
    assert_int_equal(check_list(&c, text, true, true, "k.cpp", bad, sizeof bad),
                     NOPI_DEPS_AMBIGUOUS);
    assert_string_equal(bad, "k.cpp");
    /* any other bare name that is there and outside is a read of it */
    assert_int_equal(check_list(&c, "k.o: k.cpp\n", true, true, "other.cpp", bad, sizeof bad),
                     NOPI_DEPS_OUTSIDE);
    /* nor may a missing name outside the temporary folder pass, .file's aside */
    assert_int_equal(check_list(&c, "k.o: gone.s\n", true, true, "k.cpp", bad, sizeof bad),
                     NOPI_DEPS_UNREADABLE);
    assert_int_equal(chdir(cwd), 0);
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

/* In a child confined as libtcc's is (no exec, so no program runs in between): each call of
 * the filter's table fails as it says, and what a compile does still works.  The number of
 * the first surprise, or 0. */
static int calls_in_a_confined_child(void)
{
    char c = 'x';
    int sv[2], fds[2], st;
    if (socket(AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM)
        return 1;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 || errno != EPERM)
        return 2;
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 || errno != EPERM)
        return 3;
    if (ioctl(2, TIOCSTI, &c) == 0 || errno != EPERM)
        return 4;
    /* the high half of the request cannot hide it: the kernel reads only the low one */
    if (syscall(SYS_ioctl, 2, (unsigned long)TIOCSTI | (1ul << 32), &c) == 0 || errno != EPERM)
        return 5;
    if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
        return 6;
    long r = syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    if (r > 0 || errno != EPERM)
        return 7;
    if (syscall(SYS_clone3, NULL, 0) == 0 || errno != ENOSYS)   /* glibc then uses clone */
        return 8;
    if (syscall(SYS_bpf, 0, NULL, 0) == 0 || errno != EPERM)
        return 9;
#ifdef __x86_64__
    if (syscall(SYS_getpid | 0x40000000) >= 0 || errno != EPERM)   /* x32 */
        return 10;
#endif
    /* a compile's own calls: pipes, a child that ends, the terminal's size */
    if (pipe(fds) != 0)
        return 20;
    pid_t p = fork();
    if (p == 0)
        _exit(7);
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
        return 21;
    struct winsize ws;
    if (ioctl(fds[0], TIOCGWINSZ, &ws) == 0 || errno != ENOTTY)
        return 22;
    /* signals: to its own children and group, yes; where Landlock has scopes (ABI 6), not
     * to a process it did not start, its parent here */
    p = fork();
    if (p == 0) {
        pause();
        _exit(0);
    }
    if (p < 0 || kill(p, SIGKILL) != 0 || waitpid(p, &st, 0) != p || kill(0, 0) != 0)
        return 23;
    if (nop_landlock_abi() >= 6 && (kill(getppid(), 0) == 0 || errno != EPERM))
        return 24;
    return 0;
}

static void compiler_children_are_refused_calls(void **state)
{
    make_tree();
    nopi_confine c;
    confine_for(&c);
    assert_true(c.filter.len > 0);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0)
        _exit(nopi_confine_child(&c, false, nopi_confine_address_space()) != 0
                  ? 100 : calls_in_a_confined_child());
    int st = 0;
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    nopi_confine_free(&c);
    /* and NEURONOP_SECCOMP=off leaves the filter out */
    setenv("NEURONOP_SECCOMP", "off", 1);
    confine_for(&c);
    unsetenv("NEURONOP_SECCOMP");
    assert_int_equal(c.filter.len, 0);
    nopi_confine_free(&c);
    unit_cleanup(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths_stay_in_the_folder),
        cmocka_unit_test(a_folder_made_meanwhile_is_still_inside),
        cmocka_unit_test(dependency_lists_are_checked),
        cmocka_unit_test(dependency_names_are_read_as_their_writer_wrote_them),
        cmocka_unit_test(the_assemblers_own_names),
        cmocka_unit_test(diagnostics_never_quote_outside),
        cmocka_unit_test(compiler_children_are_refused_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
