/* Unit tests of what a process does before it runs user code (lib/base/usercode.c): its
 * environment emptied, a literal given to putenv and a value given to setenv included,
 * and, where the kernel has Landlock, its reads held to the library folder: not a file
 * beside it, not a folder LD_LIBRARY_PATH names relatively, nothing when the library lies in
 * the home folder. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "base/landlock.h"
#include "base/usercode.h"

/* Runs child() in a forked process and returns its exit status (-1: it did not exit). */
static int in_child(int (*child)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(child(arg));
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static int empties(void *arg)
{
    (void)arg;
    static char literal[] = "NEURONOP_UNIT_SECRET=token";
    putenv(literal);
    putenv((char *)"NEURONOP_UNIT_LITERAL=read-only");   /* a string in read-only memory */
    /* a value set since the start, on the heap (glibc never frees it), outside the block
     * the process started with */
    if (setenv("NEURONOP_UNIT_HEAP", "token", 1) != 0)
        return 3;
    const char *heap = getenv("NEURONOP_UNIT_HEAP");
    if (nopi_usercode_confine(NULL, NULL) != 0)
        return 3;
    extern char **environ;
    if ((environ && environ[0]) || getenv("PATH") || strstr(literal, "token") ||
        strstr(heap, "token"))
        return 1;
    char buf[65536];
    int fd = open("/proc/self/environ", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    for (ssize_t i = 0; i < n; i++)
        if (buf[i])
            return 2;
    return 0;
}

static void environment_is_emptied(void **state)
{
    (void)state;
    assert_int_equal(in_child(empties, NULL), 0);
}

/* The folders of one test: top/lib (a library folder with its manifest, build/ and a
 * source) and top/secret beside it. */
typedef struct layout {
    char top[256], so[400], source[400], secret[400];
} layout;

static void make_layout(layout *l)
{
    snprintf(l->top, sizeof l->top, "%s", unit_tmpdir());
    char path[400];
    snprintf(path, sizeof path, "%s/lib", l->top);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/lib/build", l->top);
    mkdir(path, 0755);
    snprintf(l->so, sizeof l->so, "%s/lib/build/libx.so", l->top);
    snprintf(l->source, sizeof l->source, "%s/lib/k.c", l->top);
    snprintf(l->secret, sizeof l->secret, "%s/secret", l->top);
    snprintf(path, sizeof path, "%s/lib/neuronop.yaml", l->top);
    const char *files[] = { l->so, l->source, l->secret, path };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(files[i], "w");
        assert_non_null(f);
        fputs("x\n", f);
        fclose(f);
    }
}

static bool readable(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* In the child: the library folder is readable, the secret beside it is not. */
static int folder_only(void *arg)
{
    const layout *l = arg;
    if (chdir(l->top) != 0 || setenv("LD_LIBRARY_PATH", ".", 1) != 0 ||
        nopi_usercode_confine(l->so, NULL) != 0)
        return 3;
    return readable(l->so) && readable(l->source) && !readable(l->secret) &&
           !readable("secret") && !readable("/etc/passwd") ? 0 : 1;
}

/* In the child, with the library in the home folder: only the library file. */
static int file_only(void *arg)
{
    const layout *l = arg;
    char home[400];
    snprintf(home, sizeof home, "%s/lib", l->top);
    if (setenv("HOME", home, 1) != 0 || nopi_usercode_confine(l->source, NULL) != 0)
        return 3;
    return readable(l->source) && !readable(l->so) ? 0 : 1;
}

static void reads_stay_in_the_library_folder(void **state)
{
    (void)state;
    if (!nopi_landlock_available())
        skip();
    layout l;
    make_layout(&l);
    assert_int_equal(in_child(folder_only, &l), 0);
    assert_int_equal(in_child(file_only, &l), 0);
    unit_cleanup(l.top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(environment_is_emptied),
        cmocka_unit_test(reads_stay_in_the_library_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
