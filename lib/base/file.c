/*
 * file.c - whole-file reads and writes (a write appears whole or not at all), path joining,
 * mkdir -p, the clocks, and prefaulting fresh memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Which part of a file read_regular reads: all of it (a bigger file is refused), or at most
 * cap bytes from its start or its end. */
typedef enum part { WHOLE, HEAD, TAIL } part;

/* -1, with errno and *why saying what the file of mode m is, which is not a regular one. */
static int not_regular(mode_t m, const char **why)
{
    *why = S_ISDIR(m) ? "is a directory" : "is not a regular file";
    errno = S_ISDIR(m) ? EISDIR : EINVAL;
    return -1;
}

/* Opens path for reading only when it is a regular file: opening a device can act (a
 * terminal becomes the controlling one, /dev/watchdog is armed), reading /dev/zero never
 * ends, and a symbolic link in a folder that came with the sources, or a file name a
 * compiler's message or user code gives, can name any.  It is stat'ed before the open and
 * the opened file fstat'ed again into *st, with O_NONBLOCK and O_NOCTTY should it have
 * changed meanwhile (a FIFO's open would wait).  The descriptor; or -1 with errno set, and
 * *why saying what the file is when that is the reason ("is a directory", "is not a regular
 * file"). */
static int open_regular(const char *path, struct stat *st, const char **why)
{
    *why = NULL;
    if (stat(path, st) == 0 && !S_ISREG(st->st_mode))
        return not_regular(st->st_mode, why);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return not_regular(st->st_mode, why);
    }
    return fd;
}

/* Reads the regular file at path, of at most cap bytes, into a malloc'd NUL-terminated
 * buffer.  0; or -1 with errno set and, when the file itself is refused, *why saying what it
 * is ("is a directory", "is not a regular file": a FIFO, /dev/zero) or that it is too big
 * (EFBIG): nothing is read from such a file, which could block or never end.  With HEAD or
 * TAIL, a bigger file is not refused: its first or last cap bytes are read, and *whole (may
 * be NULL) gets its size. */
static int read_regular(const char *path, size_t cap, part which, char **data, size_t *len,
                        unsigned long long *whole, const char **why)
{
    *data = NULL;
    struct stat st;
    int fd = open_regular(path, &st, why);
    if (fd < 0)
        return -1;
    bool big = (uint64_t)st.st_size > cap;
    int e = big && which == WHOLE ? EFBIG : 0;
    if (whole)
        *whole = (unsigned long long)st.st_size;
    size_t size = e ? 0 : big ? cap : (size_t)st.st_size, got = 0;
    off_t from = !e && big && which == TAIL ? st.st_size - (off_t)cap : 0;
    char *buf = e ? NULL : malloc(size + 1);
    if (!e && !buf)
        e = ENOMEM;
    while (!e && got < size) {   /* a file that shrinks while read ends early: what was there */
        ssize_t n = pread(fd, buf + got, size - got, from + (off_t)got);
        if (n < 0 && errno != EINTR)
            e = errno;
        if (n == 0)
            break;
        if (n > 0)
            got += (size_t)n;
    }
    close(fd);
    if (e) {
        free(buf);
        errno = e;
        return -1;
    }
    buf[got] = '\0';
    *data = buf;
    if (len)
        *len = got;
    return 0;
}

int nopi_read_input(const char *path, const char *what, size_t cap, char **data, size_t *len,
                    nop_error *err)
{
    const char *why;
    if (read_regular(path, cap, WHOLE, data, len, NULL, &why) == 0)
        return 0;
    if (errno == ENOMEM)
        return nopi_nomem(err);
    if (why)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "%s '%s' %s", what, path, why);
    if (errno == EFBIG) {
        struct stat st;
        long long size = stat(path, &st) == 0 ? (long long)st.st_size : 0;
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "%s '%s' is %lld bytes, more than the "
                         "%zu a %s may have", what, path, size, cap, what);
    }
    return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read %s '%s': %s", what, path,
                     strerror(errno));
}

int nopi_read_file(const char *path, char **data, size_t *len)
{
    const char *why;
    return read_regular(path, SIZE_MAX - 1, WHOLE, data, len, NULL, &why);
}

int nopi_read_part(const char *path, size_t cap, bool tail, char **data, size_t *len,
                   unsigned long long *whole)
{
    const char *why;
    return read_regular(path, cap, tail ? TAIL : HEAD, data, len, whole, &why);
}

int nopi_read_line(const char *path, int line, char *buf, size_t size)
{
    /* the path may come from a compiler's message or from user code (a #line, a C++
     * registration): only a regular file is opened, and at most NOPI_LINE_SCAN_MAX bytes of
     * it are read looking for the line, in blocks searched with memchr (a file of 64 MB of
     * line ends takes some milliseconds, as a message may ask for its line many times).  The
     * block is the heap's: a worker may ask on a core's stack of a few kilobytes. */
    enum { BLOCK = 65536 };
    struct stat st;
    const char *why;
    int fd = open_regular(path, &st, &why);
    char *block = fd >= 0 && size > 0 && line >= 1 ? malloc(BLOCK) : NULL;
    if (!block) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    long long scanned = 0;
    int at = 1;          /* the line the next byte belongs to */
    size_t kept = 0;     /* bytes of line `line` put in buf */
    int rc = -1;
    ssize_t n;
    while (rc != 0 && scanned < NOPI_LINE_SCAN_MAX &&
           (n = read(fd, block, BLOCK)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        scanned += n;
        for (const char *p = block, *end = block + n; p < end && rc != 0;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *stop = nl ? nl : end;
            if (at == line) {   /* the line's bytes, as many as fit */
                size_t take = (size_t)(stop - p);
                if (take > size - 1 - kept)
                    take = size - 1 - kept;
                memcpy(buf + kept, p, take);
                kept += take;
                if (nl)
                    rc = 0;
            }
            if (!nl)
                break;
            at++;
            p = nl + 1;
        }
    }
    if (rc != 0 && at == line && kept > 0)   /* the last line, without its line end */
        rc = 0;
    free(block);
    close(fd);
    if (rc == 0)
        buf[kept] = '\0';
    return rc;
}

char *nopi_path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0)
        return strdup(rel);
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, dir);
    if (dir[strlen(dir) - 1] != '/')
        nopi_sb_puts(&sb, "/");
    nopi_sb_puts(&sb, rel);
    return nopi_sb_take(&sb);
}

char *nopi_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

bool nopi_path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return true;
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int nopi_mkdirs(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = c;
            if (!c)
                break;
        }
    }
    free(p);
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

double nopi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double nopi_thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes the n buffers to fd in order; 0, or an errno value. */
static int write_all(int fd, const void *const *bufs, const size_t *lens, int n)
{
    for (int i = 0; i < n; i++) {
        const char *p = bufs[i];
        for (size_t left = lens[i]; left > 0;) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return w < 0 ? errno : EIO;
            p += w, left -= (size_t)w;
        }
    }
    return 0;
}

/* Writes the n buffers to fd, then closes it; 0, or the first errno value. */
static int write_and_close(int fd, const void *const *bufs, const size_t *lens, int n)
{
    int e = write_all(fd, bufs, lens, n);
    if (close(fd) != 0 && e == 0 && errno != EINTR)
        e = errno;
    return e;
}

/* Writes into path in place, for what must not be replaced by a regular file: a character
 * device, FIFO or terminal (-o /dev/null as root would otherwise destroy /dev/null), or,
 * stream true, the caller's standard output or error (/dev/stdout, which may be a file the
 * shell made).  Never creates: what it writes to exists.  What is opened is looked at again
 * (a review's find: a link swapped in after the caller's check, to a disk or a file, would
 * have been written), and is never truncated unless it is the caller's stream.  0, or an
 * errno value (EPERM for one swapped). */
static int write_in_place(const char *path, bool stream, const void *const *bufs,
                          const size_t *lens, int n)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (stream ? O_TRUNC : 0));
    if (fd < 0)
        return errno;
    struct stat st;
    if (!stream && (fstat(fd, &st) != 0 ||
                    !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))) {
        close(fd);
        return EPERM;
    }
    return write_and_close(fd, bufs, lens, n);
}

/* Writes a regular file at dest through a temporary file beside it and rename(2), which
 * replaces whatever dest was, a symlink included.  The temporary file's name is not
 * guessable and it is made with O_EXCL, so a symlink planted under the name it will have
 * cannot redirect the write.  0, or an errno value. */
static int write_replacing(const char *dest, const void *const *bufs, const size_t *lens, int n)
{
    char *tmp = NULL;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        unsigned r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (unsigned)(nopi_now() * 1e9) ^ (unsigned)tries;
        free(tmp);
        /* ".tmp." marks it for the cleaners of a killed build's leftovers (objcache.c) */
        if (asprintf(&tmp, "%s.tmp.%ld.%08x", dest, (long)getpid(), r) < 0)
            return ENOMEM;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    int e = 0;
    if (fd < 0) {
        e = errno;
    } else {
        e = write_and_close(fd, bufs, lens, n);
        if (e == 0 && rename(tmp, dest) != 0)
            e = errno;
        if (e != 0)
            unlink(tmp);
    }
    free(tmp);
    return e;
}

/* Whether symlink path names the caller's standard output or error, as /dev/stdout does
 * (/proc/self/fd/1): its target is then wherever the caller's shell sent that stream.  Not
 * another descriptor: a link planted in a library folder could name one neuronop holds
 * open on a file of its own. */
static bool names_own_stream(const char *path)
{
    char target[64];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return false;
    target[n] = '\0';
    return strcmp(target, "/proc/self/fd/1") == 0 || strcmp(target, "/proc/self/fd/2") == 0 ||
           strcmp(target, "/dev/fd/1") == 0 || strcmp(target, "/dev/fd/2") == 0;
}

/* Fills err for errno value e from writing path; 0 when e is 0, else -1. */
static int write_result(int e, const char *path, nop_error *err)
{
    if (e == 0)
        return 0;
    return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot write '%s': %s", path, strerror(e));
}

int nopi_write_whole(const char *path, const void *const *bufs, const size_t *lens, int n,
                     nop_error *err)
{
    return write_result(write_replacing(path, bufs, lens, n), path, err);
}

int nopi_write_output(const char *path, const void *const *bufs, const size_t *lens, int n,
                      nop_error *err)
{
    /* In place: a character device, FIFO or socket, directly or through a link (/dev/null,
     * a link to a terminal), and /dev/stdout's and /dev/stderr's kind of link.  A link to a
     * regular file, to a disk (a block device) or to nothing is replaced, never written
     * through: a library folder is untrusted, and a report.xml linked to ~/.bashrc must not
     * put its text there, nor one linked to /dev/sda over a disk (a red team's find, as root
     * in CI).  A disk named itself is refused: no output of neuronop's is one. */
    struct stat st, target;
    bool in_place = false, stream = false, exists = lstat(path, &st) == 0;
    if (exists && S_ISBLK(st.st_mode))
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot write '%s': it is a block "
                         "device (a disk), which neuronop never writes; name a file", path);
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        stream = S_ISLNK(st.st_mode) && names_own_stream(path);
        in_place = !S_ISLNK(st.st_mode) || stream ||
                   (stat(path, &target) == 0 && !S_ISREG(target.st_mode) &&
                    !S_ISDIR(target.st_mode) && !S_ISBLK(target.st_mode));
    }
    int e = in_place ? write_in_place(path, stream, bufs, lens, n)
                     : write_replacing(path, bufs, lens, n);
    return write_result(e, path, err);
}

int nop_write_file(const char *path, const void *data, size_t len, nop_error *err)
{
    return nopi_write_output(path, &data, &len, 1, err);
}

void nopi_diag_add_excerpt(nop_diag *d)
{
    char text[512];
    if (!d->file[0] || d->line <= 0 || nopi_read_line(d->file, d->line, text, sizeof text) != 0)
        return;
    size_t used = strlen(d->detail);
    snprintf(d->detail + used, sizeof d->detail - used, "%s%5d | %s", used ? "\n" : "",
             d->line, text);
}

bool nopi_is_cxx_source(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (strcmp(dot, ".cpp") == 0 || strcmp(dot, ".cc") == 0 ||
                   strcmp(dot, ".cxx") == 0);
}

bool nopi_same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}
