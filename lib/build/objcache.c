/*
 * objcache.c - the compile cache of the system C++ compiler's objects (see objcache.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "objcache.h"

#define CACHE_MAGIC "neuronop-objcache 1"
#define DEFAULT_MB 512
/* a temporary file this old was left by a killed build */
#define STALE_SECONDS 3600

int nopi_objcache_open(nopi_objcache *c, nop_error *err)
{
    memset(c, 0, sizeof *c);
    const char *dir = getenv("NEURONOP_CACHE_DIR");
    if (!dir || !dir[0])
        return 0;
    const char *size = getenv("NEURONOP_CACHE_SIZE");
    long long mb = DEFAULT_MB;
    if (size && size[0]) {
        char *end;
        errno = 0;
        mb = strtoll(size, &end, 10);
        if (errno || *end || mb < 1 || mb > 1024 * 1024) {
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "NEURONOP_CACHE_SIZE is '%s', not a "
                      "size in megabytes", size);
            nopi_detail(err, "give a whole number from 1 to 1048576 (the default is %d), or "
                        "unset NEURONOP_CACHE_DIR to build without the cache", DEFAULT_MB);
            return -1;
        }
    }
    if (nopi_mkdirs(dir) != 0 || access(dir, W_OK | X_OK) != 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot use the compile cache '%s' "
                  "(NEURONOP_CACHE_DIR): %s", dir, strerror(errno));
        nopi_detail(err, "name a folder you can write, or unset NEURONOP_CACHE_DIR to build "
                    "without the cache");
        return -1;
    }
    if (!(c->dir = strdup(dir)))
        return nopi_nomem(err);
    c->max_bytes = mb * 1024 * 1024;
    return 0;
}

void nopi_objcache_close(nopi_objcache *c)
{
    free(c->dir);
    c->dir = NULL;
}

int nopi_hash_compiler(nopi_hasher *h, const char *program)
{
    char *found = NULL;
    if (strchr(program, '/')) {
        found = realpath(program, NULL);
    } else {
        const char *path = getenv("PATH");
        char *copy = strdup(path && path[0] ? path : "/usr/bin:/bin");
        for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
             d = strtok_r(NULL, ":", &save)) {
            char *p = nopi_path_join(d, program);
            if (p && access(p, X_OK) == 0)
                found = realpath(p, NULL);
            free(p);
        }
        free(copy);
    }
    struct stat st;
    if (!found || stat(found, &st) != 0) {
        free(found);
        return -1;
    }
    nopi_hasher_add_str(h, found);
    nopi_hasher_add(h, &st.st_size, sizeof st.st_size);
    nopi_hasher_add(h, &st.st_mtim, sizeof st.st_mtim);
    free(found);
    return 0;
}

/* A precompiled header stands in the preprocessed text as one line naming it (g++
 * -fpch-preprocess): its headers are not in the text, so the file itself goes into the key,
 * as its size and modification time.  An entry made again (a standard header upgraded) keeps
 * its name but not its time (pch.c), and the objects compiled with the old one miss. */
static void hash_pch_lines(nopi_hasher *h, const char *text, size_t len)
{
    static const char pragma[] = "#pragma GCC pch_preprocess \"";
    const char *end = text + len;
    for (const char *p = text; p < end; p++) {
        p = memmem(p, (size_t)(end - p), pragma, sizeof pragma - 1);
        if (!p)
            return;
        const char *name = p + sizeof pragma - 1;
        const char *q = memchr(name, '"', (size_t)(end - name));
        char path[4096];
        struct stat st;
        if (!q || (size_t)(q - name) >= sizeof path)
            return;
        memcpy(path, name, (size_t)(q - name));
        path[q - name] = '\0';
        if (stat(path, &st) == 0) {
            nopi_hasher_add(h, &st.st_size, sizeof st.st_size);
            nopi_hasher_add(h, &st.st_mtim, sizeof st.st_mtim);
        }
        p = q;
    }
}

int nopi_objcache_key(const nopi_argv *compile, const char *preprocessed, char key[33])
{
    nopi_hasher *h = nopi_hasher_new();
    char *text = NULL;
    size_t len = 0;
    int rc = -1;
    if (!h || compile->n < 1 || nopi_hash_compiler(h, compile->v[0]) != 0 ||
        nopi_read_file(preprocessed, &text, &len) != 0)
        goto out;
    nopi_hasher_add_str(h, CACHE_MAGIC);
    bool debug = false;
    for (int i = 0; i < compile->n; i++) {
        const char *a = compile->v[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "-MF") == 0 || strcmp(a, "-Xassembler") == 0) {
            i++;   /* output files: in the build's temporary folder, a new name each time */
            continue;
        }
        if (strcmp(a, "-MD") == 0)
            continue;
        /* DWARF names the folder it was compiled in; stabs (memcheck's -gstabs) does not */
        if (strncmp(a, "-g", 2) == 0 && strcmp(a, "-g0") != 0 && strcmp(a, "-gstabs") != 0)
            debug = true;
        nopi_hasher_add_str(h, a);
    }
    if (debug) {
        char cwd[4096];
        nopi_hasher_add_str(h, getcwd(cwd, sizeof cwd) ? cwd : "?");
    }
    nopi_hasher_add(h, text, len);
    hash_pch_lines(h, text, len);
    nopi_hasher_hex(h, key);
    rc = 0;
out:
    free(text);
    nopi_hasher_free(h);
    return rc;
}

static char *entry_path(const nopi_objcache *c, const char *key, const char *ext)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s", key, ext);
    return nopi_path_join(c->dir, name);
}

/* Copies from to to (created or truncated); 0, or -1. */
static int copy_file(const char *from, const char *to)
{
    char *data = NULL;
    size_t len = 0;
    if (nopi_read_file(from, &data, &len) != 0)
        return -1;
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t done = 0;
    while (fd >= 0 && done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    free(data);
    int rc = fd >= 0 && done == len ? 0 : -1;
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    return rc;
}

bool nopi_objcache_get(const nopi_objcache *c, const char *key, const char *obj,
                       const char *log)
{
    char *o = entry_path(c, key, ".o"), *l = entry_path(c, key, ".log");
    /* the messages first: put writes them before the object, evict removes them after it */
    bool hit = o && l && access(o, R_OK) == 0 && copy_file(l, log) == 0 &&
               copy_file(o, obj) == 0;
    if (hit)
        utimensat(AT_FDCWD, o, NULL, 0);   /* recently used: evicted last */
    free(o);
    free(l);
    return hit;
}

typedef struct entry {
    char *key;
    long long bytes;
    struct timespec used;
} entry;

static int by_use(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->used.tv_sec != b->used.tv_sec)
        return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
    return a->used.tv_nsec < b->used.tv_nsec ? -1 : a->used.tv_nsec > b->used.tv_nsec;
}

static bool ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n > m && strcmp(s + n - m, end) == 0;
}

/* Removes the least recently used entries (an entry's time is its object's) until the
 * folder is at most 90% of its bound, so that not every build scans it again; and the
 * temporary files of builds killed long ago. */
static void evict(const nopi_objcache *c)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return;
    entry *list = NULL;
    size_t n = 0, cap = 0;
    long long total = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, 0) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (strstr(e->d_name, ".tmp.")) {
            if (now - st.st_mtime > STALE_SECONDS)
                unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        total += st.st_size;
        if (!ends_with(e->d_name, ".o"))
            continue;   /* a .log counts towards the size and goes with its object */
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            entry *l = realloc(list, ncap * sizeof *l);
            if (!l)
                break;
            list = l;
            cap = ncap;
        }
        char *key = strndup(e->d_name, strlen(e->d_name) - 2);
        if (!key)
            break;
        list[n++] = (entry){ key, st.st_size, st.st_mtim };
    }
    closedir(d);
    if (total > c->max_bytes && n > 0) {
        qsort(list, n, sizeof *list, by_use);
        for (size_t i = 0; i < n && total > c->max_bytes / 10 * 9; i++) {
            char *o = entry_path(c, list[i].key, ".o"), *l = entry_path(c, list[i].key, ".log");
            struct stat st;
            if (l && stat(l, &st) == 0)
                total -= st.st_size;
            total -= list[i].bytes;
            if (o)
                unlink(o);
            if (l)
                unlink(l);
            free(o);
            free(l);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(list[i].key);
    free(list);
}

void nopi_objcache_put(const nopi_objcache *c, const char *key, const char *obj,
                       const char *log)
{
    char *o = entry_path(c, key, ".o"), *l = entry_path(c, key, ".log");
    char *odata = NULL, *ldata = NULL;
    size_t olen = 0, llen = 0;
    nop_error ignored = { 0 };
    unsigned long long more;
    /* of the messages, what the build read (syscc.h: a flood of them is not kept) */
    if (o && l && nopi_read_file(obj, &odata, &olen) == 0 &&
        nopi_tool_log(log, &ldata, &more) == 0) {
        llen = strlen(ldata);
        const void *lb[] = { ldata }, *ob[] = { odata };
        if (nopi_write_whole(l, lb, &llen, 1, &ignored) == 0)
            nopi_write_whole(o, ob, &olen, 1, &ignored);
    }
    free(odata);
    free(ldata);
    free(o);
    free(l);
    evict(c);
}
