/*
 * pch.c - the standard headers each C++ source is given first, precompiled once per compiler
 * and flags (see pch.h).
 *
 * An entry is a folder of the cache named by its key, holding a copy of torch/detail/std.h,
 * its precompiled form beside it (std.h.gch, where g++ looks for it) and the files g++ read
 * to make it (std.h.d).  It is made in the build's temporary folder by the confined
 * compiler and moved in by neuronop, the precompiled form last, each file by rename(2): a
 * build running at the same time sees an entry whole or not at all.
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

#include "builder.h"
#include "objcache.h"

#define PCH_MAGIC "neuronop-pch 1"
#define STD_HEADER "torch/detail/std.h"
/* entries kept: one per compiler and flag set in use (with and without --memcheck, another
 * $CXX), each about 60 MB; the least recently used go first */
#define KEEP_ENTRIES 4

/* The folder entries go in (pch.h says which), or NULL when no setting names one. */
static char *cache_root(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')   /* the XDG rule: a relative value is ignored */
        return nopi_path_join(xdg, "neuronop/pch");
    const char *home = getenv("HOME");
    if (home && home[0] == '/')
        return nopi_path_join(home, ".cache/neuronop/pch");
    return NULL;
}

void nopi_pch_open(nopi_pch *p, const char *cxx_program)
{
    if (nopi_is_clang(cxx_program))
        return;
    char *root = cache_root();
    if (root && nopi_mkdirs(root) == 0 && access(root, W_OK | X_OK) == 0)
        p->root = root;
    else
        free(root);
}

void nopi_pch_free(nopi_pch *p)
{
    free(p->root);
    free(p->header);
    memset(p, 0, sizeof *p);
}

/* Whether flag i of a is one the entry is made without, and that its key leaves out: a
 * folder to include from or a macro (g++ checks that a unit's macros leave the header's
 * meaning alone, and reads its text when they do not); a warning flag (g++ does not check
 * them: warnings in standard headers are not shown anyway), but -W[no-]deprecated, which
 * sets __DEPRECATED, a macro libstdc++ tests: made without it, the entry is refused by
 * every unit compiled with it (memcheck's); a -std= that a later one overrides (the
 * device's, which comes after the user's); and a flag given again later (an -O2 in
 * extra_cflags).  The later copy is the one kept: the last of -fX, -fno-X, -fX wins, and
 * keeping the first would make an entry with -fno-X that g++ does not always refuse
 * (-fshort-enums changes the size of the header's enums, and no macro says so).  So
 * libraries that differ only in these share one entry. */
static bool left_out(const nopi_argv *a, int i)
{
    const char *f = a->v[i];
    if (strncmp(f, "-I", 2) == 0 || strncmp(f, "-D", 2) == 0 || strncmp(f, "-U", 2) == 0 ||
        strcmp(f, "-w") == 0)
        return true;
    if (strncmp(f, "-W", 2) == 0 && strcmp(f, "-Wdeprecated") != 0 &&
        strcmp(f, "-Wno-deprecated") != 0)
        return true;
    for (int j = i + 1; strncmp(f, "-std=", 5) == 0 && j < a->n; j++)
        if (strncmp(a->v[j], "-std=", 5) == 0)
            return true;
    for (int j = i + 1; j < a->n; j++)
        if (strcmp(a->v[j], f) == 0)
            return true;
    return false;
}

/* The environment g++ reads its search path and its own programs from: the compiler runs
 * with neuronop's environment, so an entry made with CPLUS_INCLUDE_PATH=DIR holds DIR's
 * headers, and no -MD list says that a build without it would find others. */
static const char *const compiler_env[] = { "CPATH", "CPLUS_INCLUDE_PATH", "GCC_EXEC_PREFIX",
                                            "COMPILER_PATH" };

/* The entry's key: the compiler as a file, the flags but those left out, the compiler's
 * environment, the header's text.  0, or -1 when the compiler or the header cannot be
 * read. */
static int entry_key(const nopi_argv *a, const char *text, char key[33])
{
    nopi_hasher *h = nopi_hasher_new();
    if (!h || nopi_hash_compiler(h, a->v[0]) != 0) {
        nopi_hasher_free(h);
        return -1;
    }
    nopi_hasher_add_str(h, PCH_MAGIC);
    for (size_t i = 0; i < NOPI_ARRAY_LEN(compiler_env); i++) {
        const char *v = getenv(compiler_env[i]);
        nopi_hasher_add_str(h, compiler_env[i]);
        nopi_hasher_add_str(h, v ? v : "");
        nopi_hasher_add_str(h, v ? "set" : "unset");   /* CPATH= is a search of "." */
    }
    for (int i = 1; i < a->n; i++)
        if (!left_out(a, i))
            nopi_hasher_add_str(h, a->v[i]);
    nopi_hasher_add_str(h, text);
    nopi_hasher_hex(h, key);
    nopi_hasher_free(h);
    return 0;
}

static bool later(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Whether the file a changed after the entry b was made.  Its change time too, not only its
 * modification time: a package manager (dpkg, rpm), tar and cp -p give an upgraded header
 * the time it has in the package, often older than an entry made last week, but the change
 * time is when it was put in place. */
static bool newer(const struct stat *a, const struct stat *b)
{
    return later(&a->st_mtim, &b->st_mtim) || later(&a->st_ctim, &b->st_mtim);
}

/* True when dir holds a whole entry that no file it was made from is newer than (a package
 * upgrade changed a standard header, say); an unreadable or empty list is not fresh. */
static bool fresh(const char *dir)
{
    char *gch = nopi_path_join(dir, "std.h.gch"), *deps = nopi_path_join(dir, "std.h.d");
    char *text = NULL, *copy = nopi_path_join(dir, "std.h");
    size_t len = 0;
    struct stat made, st;
    bool ok = gch && deps && copy && stat(copy, &st) == 0 && stat(gch, &made) == 0 &&
              nopi_read_file(deps, &text, &len) == 0;
    int files = 0;
    char *save = NULL;
    /* make's syntax: "target: file file \" and more lines of files */
    for (char *t = ok ? strtok_r(text, " \t\n", &save) : NULL; t && ok;
         t = strtok_r(NULL, " \t\n", &save)) {
        size_t n = strlen(t);
        if (strcmp(t, "\\") == 0 || t[n - 1] == ':')
            continue;
        ok = stat(t, &st) == 0 && !newer(&st, &made);
        files++;
    }
    free(text);
    free(gch);
    free(deps);
    free(copy);
    return ok && files > 0;
}

/* Moves the file from into to: rename(2), or a copy through a temporary file when they are
 * on different file systems.  0, or -1. */
static int move_in(const char *from, const char *to)
{
    if (rename(from, to) == 0)
        return 0;
    if (errno != EXDEV)
        return -1;
    char *data = NULL;
    size_t len = 0;
    nop_error ignored = { 0 };
    int rc = nopi_read_file(from, &data, &len);
    if (rc == 0) {
        const void *bufs[] = { data };
        rc = nopi_write_whole(to, bufs, &len, 1, &ignored);
    }
    free(data);
    return rc;
}

/* Removes the least recently used entries (an entry's folder time is when a build last
 * used it) until at most KEEP_ENTRIES - 1 are left, making room for a new one; an entry used
 * within the last hour is kept whatever their number, as a build may be reading it. */
static void prune(const char *root)
{
    time_t hour_ago = time(NULL) - 3600;
    for (int round = 0; round < 64; round++) {
        DIR *d = opendir(root);
        if (!d)
            return;
        char oldest[64] = "";
        struct timespec when = { 0 };
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            struct stat st;
            if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof oldest ||
                fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                !S_ISDIR(st.st_mode))
                continue;
            n++;
            if (st.st_mtim.tv_sec < hour_ago &&
                (!oldest[0] || st.st_mtim.tv_sec < when.tv_sec ||
                 (st.st_mtim.tv_sec == when.tv_sec && st.st_mtim.tv_nsec < when.tv_nsec))) {
                nopi_strlcpy(oldest, e->d_name, sizeof oldest);
                when = st.st_mtim;
            }
        }
        closedir(d);
        char *dir = n >= KEEP_ENTRIES && oldest[0] ? nopi_path_join(root, oldest) : NULL;
        if (!dir)
            return;
        nopi_build_remove_tree(dir);
        bool gone = access(dir, F_OK) != 0;
        free(dir);
        if (!gone)
            return;
    }
}

/* Precompiles the header at share_h with a's flags (but those left out) in the build's
 * temporary folder, and moves the entry into dir.  0, or -1 when the compiler failed or
 * the entry could not be written (the caller then gives the text). */
static int make_entry(builder *b, const nopi_argv *a, const char *share_h, const char *text,
                      const char *dir)
{
    nopi_tool_job job = { 0 };
    char *gch = nopi_path_join(b->tmpdir, "std.h.gch");
    char *deps = nopi_path_join(b->tmpdir, "std.h.d");
    job.log = nopi_path_join(b->tmpdir, "std.h.log");
    job.name = STD_HEADER;
    job.status = -1;
    for (int i = 0; i < a->n; i++)
        if (i == 0 || !left_out(a, i))
            nopi_argv_add(&job.argv, a->v[i]);
    const char *rest[] = { "-x", "c++-header", "-MD", "-MF", deps, "-o", gch, share_h };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(rest); i++)
        nopi_argv_add(&job.argv, rest[i] ? rest[i] : "");
    int rc = gch && deps && job.log && !job.argv.failed ? 0 : -1;
    nop_error ignored = { 0 };
    if (rc == 0) {
        nopi_build_note_job(b, &job);
        rc = nopi_tools_run(&job, 1, 1, &b->confine, &ignored) == 0 && job.status == 0 ? 0 : -1;
    }
    char *copy = nopi_path_join(dir, "std.h"), *dest = nopi_path_join(dir, "std.h.gch");
    char *dest_deps = nopi_path_join(dir, "std.h.d");
    size_t len = strlen(text);
    const void *bufs[] = { text };
    if (rc == 0)
        prune(b->pch.root);
    if (rc == 0)   /* the precompiled form last: an entry without it is not used */
        rc = copy && dest && dest_deps && (mkdir(dir, 0755) == 0 || errno == EEXIST) &&
             nopi_write_whole(copy, bufs, &len, 1, &ignored) == 0 &&
             move_in(deps, dest_deps) == 0 && move_in(gch, dest) == 0 ? 0 : -1;
    if (rc != 0 && (b->o->verbose || b->m->verbose))
        nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0,
                  "the standard headers were not precompiled ('%s' exited with %d): each C++ "
                  "source parses them", job.argv.v ? job.argv.v[0] : "", job.status);
    nopi_argv_free(&job.argv);
    free(job.log);
    free(gch);
    free(deps);
    free(copy);
    free(dest);
    free(dest_deps);
    return rc;
}

/* Makes the entry in dir, unless a build that held the lock first made it; true when it is
 * there.  One build at a time makes entries (the lock is the folder of entries' flock):
 * builds started together wait for the first one's instead of each making its own and
 * moving it in over the others', which changes its time, and so the compile cache's keys
 * of the objects made with it, and the next build would miss them.  A build that waited
 * past the lock timeout (another one stopped) gives the text; where the file system has no
 * locks, it makes the entry unlocked. */
static bool made(builder *b, const nopi_argv *a, const char *share_h, const char *text,
                 const char *dir)
{
    /* a file, not the folder: NFS makes flock a POSIX lock, which needs a file open for
     * writing; prune passes it by (a dot name, no folder) */
    char *path = nopi_path_join(b->pch.root, ".lock");
    int fd = path ? open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666) : -1;
    free(path);
    int locked = fd >= 0 ? nopi_build_flock(b, fd, NULL) : 1;   /* 1: no locks, go on */
    if (locked < 0 && (b->o->verbose || b->m->verbose))
        nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0,
                  "another build has been making the precompiled standard headers for "
                  "%.0f s: each C++ source parses them", nopi_build_lock_timeout(b));
    bool ok = locked >= 0 && (fresh(dir) || make_entry(b, a, share_h, text, dir) == 0);
    if (fd >= 0)
        close(fd);   /* releases the flock */
    return ok;
}

int nopi_build_std_header(builder *b, nopi_argv *a)
{
    nopi_pch *p = &b->pch;
    char *share_h = nopi_path_join(b->include_dir, STD_HEADER), *text = NULL;
    char key[33], *dir = NULL;
    if (!share_h)
        return nopi_nomem(b->err);
    const char *header = share_h;
    if (p->root && nopi_read_file(share_h, &text, NULL) == 0 && entry_key(a, text, key) == 0) {
        if (strcmp(p->key, key) == 0) {
            /* this build has made or checked it already, or failed to make it: the other
             * units do not each try again (2 s each), they get the text */
            if (p->header)
                header = p->header;
        } else {
            free(p->header);
            p->header = NULL;
            memcpy(p->key, key, sizeof key);
            if ((dir = nopi_path_join(p->root, key)) && (fresh(dir) || made(b, a, share_h,
                                                                             text, dir))) {
                utimensat(AT_FDCWD, dir, NULL, 0);   /* used now: pruned last */
                if ((p->header = nopi_path_join(dir, "std.h")))
                    header = p->header;
            }
        }
    }
    nopi_argv_add(a, "-include");
    nopi_argv_add(a, header);
    free(dir);
    free(text);
    free(share_h);
    return a->failed ? nopi_nomem(b->err) : 0;
}
