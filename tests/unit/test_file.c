/* Unit tests of how neuronop writes files (lib/base/file.c): its own files are always
 * replaced whole, a symlink included, so nothing planted in a build or cache folder is
 * written through; a file the user names is replaced whole when it is regular, or a link
 * to a regular file or to nothing, but a FIFO or device, or a link to one or to the
 * caller's own descriptor (/dev/stdout), is written in place and left as it was (before,
 * -o /dev/null as root replaced the device with a regular file; the tests use a FIFO,
 * which a regression breaks without harm to the machine); and neuronop reads a file of its
 * own only when it is regular. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "base/internal.h"

/* The whole contents of path, as a NUL-terminated string in buf (empty when unreadable). */
static const char *contents(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, size - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    return buf;
}

static char *join(const char *dir, const char *name)
{
    char *p = nopi_path_join(dir, name);
    assert_non_null(p);
    return p;
}

static int write_one(int (*writer)(const char *, const void *const *, const size_t *, int,
                                   nop_error *), const char *path, const char *text)
{
    const void *bufs[] = { text };
    size_t len = strlen(text);
    nop_error err = { 0 };
    return writer(path, bufs, &len, 1, &err);
}

static void own_files_replace_a_symlink(void **state)
{
    const char *dir = unit_tmpdir();
    char *target = join(dir, "target"), *link = join(dir, "link"), buf[64];
    unit_write(dir, "target", "outside");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(write_one(nopi_write_whole, link, "new"), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_string_equal(contents(link, buf, sizeof buf), "new");
    assert_string_equal(contents(target, buf, sizeof buf), "outside");
    free(target), free(link);
    unit_cleanup(dir);
}

/* A library folder is untrusted: a report.xml linked to ~/.bashrc must not put its text
 * there (a review found 8b188d9's first version writing through such a link). */
static void outputs_replace_a_link_to_a_file(void **state)
{
    const char *dir = unit_tmpdir();
    char *target = join(dir, "target"), *link = join(dir, "link"), *dangling = join(dir, "d"),
         *absent = join(dir, "absent"), buf[64];
    unit_write(dir, "target", "outside");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(symlink(absent, dangling), 0);
    assert_int_equal(write_one(nopi_write_output, link, "new"), 0);
    assert_int_equal(write_one(nopi_write_output, dangling, "new"), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_string_equal(contents(link, buf, sizeof buf), "new");
    assert_string_equal(contents(target, buf, sizeof buf), "outside");
    assert_int_equal(access(absent, F_OK), -1);   /* nothing made where it pointed */
    free(target), free(link), free(dangling), free(absent);
    unit_cleanup(dir);
}

/* /dev/stdout is a link to /proc/self/fd/1: written in place, into whatever the shell made
 * standard output, a regular file included; a link to another descriptor is replaced (it
 * could name a file neuronop holds open). */
static void outputs_write_into_a_stdout_link_only(void **state)
{
    const char *dir = unit_tmpdir();
    char *file = join(dir, "file"), *link = join(dir, "stdout"), *other = join(dir, "other"),
         target[64], buf[64];
    int fd = open(file, O_RDWR | O_CREAT, 0600), saved = dup(1);
    assert_true(fd >= 0 && saved >= 0);
    assert_int_equal(symlink("/proc/self/fd/1", link), 0);
    fflush(stdout);
    assert_int_equal(dup2(fd, 1), 1);
    int rc = write_one(nopi_write_output, link, "through");
    assert_int_equal(dup2(saved, 1), 1);
    close(saved);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(contents(file, buf, sizeof buf), "through");
    snprintf(target, sizeof target, "/proc/self/fd/%d", fd);
    assert_int_equal(symlink(target, other), 0);
    assert_int_equal(write_one(nopi_write_output, other, "replaced"), 0);
    assert_int_equal(lstat(other, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_string_equal(contents(file, buf, sizeof buf), "through");
    close(fd);
    free(file), free(link), free(other);
    unit_cleanup(dir);
}

/* The temporary file's name cannot be guessed, and a link planted under the old one
 * (NAME.tmp.PID) is not followed. */
static void a_planted_temporary_link_is_not_followed(void **state)
{
    const char *dir = unit_tmpdir();
    char *victim = join(dir, "victim"), *out = join(dir, "out"), *planted = NULL, buf[64];
    unit_write(dir, "victim", "safe");
    assert_true(asprintf(&planted, "%s.tmp.%ld", out, (long)getpid()) > 0);
    assert_int_equal(symlink(victim, planted), 0);
    assert_int_equal(write_one(nopi_write_output, out, "new"), 0);
    assert_string_equal(contents(victim, buf, sizeof buf), "safe");
    assert_string_equal(contents(out, buf, sizeof buf), "new");
    free(victim), free(out), free(planted);
    unit_cleanup(dir);
}

static void outputs_replace_a_regular_file_whole(void **state)
{
    const char *dir = unit_tmpdir();
    char *path = join(dir, "out"), *tmp = NULL, buf[64];
    unit_write(dir, "out", "old contents, longer");
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    assert_int_equal(write_one(nopi_write_output, path, "new"), 0);
    assert_int_equal(stat(path, &after), 0);
    assert_true(before.st_ino != after.st_ino);   /* renamed in, not rewritten */
    assert_string_equal(contents(path, buf, sizeof buf), "new");
    assert_true(asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) > 0);
    assert_int_equal(access(tmp, F_OK), -1);
    free(path), free(tmp);
    unit_cleanup(dir);
}

static void outputs_write_into_a_fifo_in_place(void **state)
{
    const char *dir = unit_tmpdir();
    char *path = join(dir, "fifo"), buf[64];
    assert_int_equal(mkfifo(path, 0600), 0);
    int reader = open(path, O_RDONLY | O_NONBLOCK);   /* so the writer's open does not wait */
    assert_true(reader >= 0);
    assert_int_equal(write_one(nopi_write_output, path, "through"), 0);
    ssize_t n = read(reader, buf, sizeof buf - 1);
    assert_int_equal(n, 7);
    buf[n] = '\0';
    assert_string_equal(buf, "through");
    close(reader);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    free(path);
    unit_cleanup(dir);
}

static void a_folder_is_an_error_naming_it(void **state)
{
    const char *dir = unit_tmpdir();
    nop_error err = { 0 };
    const void *bufs[] = { "x" };
    size_t len = 1;
    assert_int_equal(nopi_write_output(dir, bufs, &len, 1, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_non_null(strstr(err.diag.msg, "cannot write '"));
    unit_cleanup(dir);
}

/* Reading: a file of neuronop's own (a stamp, a library) is read only when it is regular.  A
 * folder that came with the sources can make it a link to a FIFO, whose open would wait for
 * a writer for ever, or to /dev/zero, which never ends: both are refused before a byte is
 * read (the test would hang on the FIFO if they were not). */
static void reading_takes_only_a_regular_file(void **state)
{
    const char *dir = unit_tmpdir();
    char *fifo = join(dir, "fifo"), *link = join(dir, "link"), *file = join(dir, "file");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(symlink("/dev/zero", link), 0);
    char *data = NULL;
    size_t len = 0;
    errno = 0;
    assert_int_equal(nopi_read_file(fifo, &data, &len), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(nopi_read_file(link, &data, &len), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(nopi_read_file(dir, &data, &len), -1);
    assert_int_equal(errno, EISDIR);
    assert_null(data);
    assert_int_equal(write_one(nopi_write_whole, file, "stamp\n"), 0);
    assert_int_equal(nopi_read_file(file, &data, &len), 0);
    assert_int_equal(len, 6);
    assert_string_equal(data, "stamp\n");
    free(data);
    free(fifo);
    free(link);
    free(file);
    unit_cleanup(dir);
}

/* A part of a file: the first or last cap bytes and the whole size; a FIFO is refused */
static void reading_a_part_keeps_at_most_cap_bytes(void **state)
{
    const char *dir = unit_tmpdir();
    char *fifo = join(dir, "fifo"), *file = join(dir, "file");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(write_one(nopi_write_whole, file, "0123456789"), 0);
    char *data = NULL;
    size_t len = 0;
    unsigned long long whole = 0;
    assert_int_equal(nopi_read_part(file, 4, false, &data, &len, &whole), 0);
    assert_string_equal(data, "0123");
    assert_int_equal(len, 4);
    assert_int_equal(whole, 10);
    free(data);
    assert_int_equal(nopi_read_part(file, 4, true, &data, &len, &whole), 0);
    assert_string_equal(data, "6789");
    free(data);
    assert_int_equal(nopi_read_part(file, 64, true, &data, &len, &whole), 0);
    assert_string_equal(data, "0123456789");
    free(data);
    data = NULL;
    assert_int_equal(nopi_read_part(fifo, 4, false, &data, &len, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_null(data);
    free(fifo);
    free(file);
    unit_cleanup(dir);
}

/* A line of a file a message names: the name may come from user code (#line "/dev/zero"),
 * so only a regular file is read, and no further than NOPI_LINE_SCAN_MAX bytes (reading
 * /dev/zero for its second line never ended: red team, stop 40) */
static void a_source_line_is_read_only_from_a_regular_file(void **state)
{
    const char *dir = unit_tmpdir();
    char *fifo = join(dir, "fifo"), *link = join(dir, "link"), *file = join(dir, "file");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(symlink("/dev/zero", link), 0);
    assert_int_equal(write_one(nopi_write_whole, file, "one\ntwo\n"), 0);
    char line[64];
    assert_int_equal(nopi_read_line(file, 2, line, sizeof line), 0);
    assert_string_equal(line, "two");
    assert_int_equal(nopi_read_line(file, 3, line, sizeof line), -1);
    assert_int_equal(nopi_read_line("/dev/zero", 2, line, sizeof line), -1);
    assert_int_equal(nopi_read_line(link, 2, line, sizeof line), -1);
    assert_int_equal(nopi_read_line(fifo, 1, line, sizeof line), -1);   /* no open: no wait */
    assert_int_equal(nopi_read_line(dir, 1, line, sizeof line), -1);
    /* a last line without its line end; a long line cut to the buffer; an empty line */
    assert_int_equal(write_one(nopi_write_whole, file, "one\n\nthree is long\nfour"), 0);
    assert_int_equal(nopi_read_line(file, 4, line, sizeof line), 0);
    assert_string_equal(line, "four");
    assert_int_equal(nopi_read_line(file, 2, line, sizeof line), 0);
    assert_string_equal(line, "");
    char small[6];
    assert_int_equal(nopi_read_line(file, 3, small, sizeof small), 0);
    assert_string_equal(small, "three");
    assert_int_equal(nopi_read_line(file, 5, line, sizeof line), -1);
    /* a line past the first NOPI_LINE_SCAN_MAX bytes is not looked for (a sparse file) */
    int fd = open(file, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "a\n", 2, 0), 2);
    assert_int_equal(pwrite(fd, "\nfar\n", 5, NOPI_LINE_SCAN_MAX + 4096), 5);
    close(fd);
    assert_int_equal(nopi_read_line(file, 1, line, sizeof line), 0);
    assert_string_equal(line, "a");
    assert_int_equal(nopi_read_line(file, 3, line, sizeof line), -1);
    free(fifo);
    free(link);
    free(file);
    unit_cleanup(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(own_files_replace_a_symlink),
        cmocka_unit_test(outputs_replace_a_link_to_a_file),
        cmocka_unit_test(outputs_write_into_a_stdout_link_only),
        cmocka_unit_test(a_planted_temporary_link_is_not_followed),
        cmocka_unit_test(outputs_replace_a_regular_file_whole),
        cmocka_unit_test(outputs_write_into_a_fifo_in_place),
        cmocka_unit_test(a_folder_is_an_error_naming_it),
        cmocka_unit_test(reading_takes_only_a_regular_file),
        cmocka_unit_test(reading_a_part_keeps_at_most_cap_bytes),
        cmocka_unit_test(a_source_line_is_read_only_from_a_regular_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
