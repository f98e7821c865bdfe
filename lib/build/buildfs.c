/*
 * buildfs.c - the build folder: its lock (so concurrent builds take turns), the leftovers of
 * killed builds, and writing files so they appear whole or not at all.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builder.h"

/* ---- files: lock, temporary folder, atomic writes --------------------------------------- */

int nopi_build_flock(builder *b, int fd, const char *dir)
{
    double deadline = nopi_now() + nopi_build_lock_timeout(b);
    bool told = false;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR)
            return 1;   /* no locks here (ENOLCK: NFS without lockd) */
        if (nopi_now() > deadline)
            return -1;
        b->waited |= dir != NULL;   /* the build folder's lock, not a PCH entry's */
        if (dir && !told) {
            nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0,
                      "waiting for another build of '%s' to finish", dir);
            told = true;
        }
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}

double nopi_build_lock_timeout(const builder *b)
{
    return b->o->lock_timeout > 0 ? b->o->lock_timeout : 60.0;
}

void nopi_build_unwritable(builder *b, int e)
{
    if (e != EACCES && e != EROFS)
        return;
    nopi_detail(b->err, "the library must be built again (its sources, flags or library "
                "file changed since the last build: a chmod or a copy counts), which writes "
                "its build folder; build it where you may write (neuronop build "
                "--build-dir)");
}

int nopi_build_lock(builder *b, int *fd)
{
    /* never through a symbolic link: a build folder that came with the sources could point
     * it anywhere, and O_CREAT would make a file there */
    *fd = open(b->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (*fd < 0 && errno == EACCES)   /* another user's lock: flock needs no write access */
        *fd = open(b->lock_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0 && errno == ELOOP) {
        nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is a symbolic link, not a "
                  "build's lock", b->lock_path);
        nopi_detail(b->err, "remove it: neuronop makes its own");
        return -1;
    }
    if (*fd < 0) {
        int e = errno;
        nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot %s '%s': %s",
                  e == EACCES ? "open the build's lock" : "create", b->lock_path, strerror(e));
        nopi_build_unwritable(b, e);
        return -1;
    }
    /* where flock does not work, builds go on unlocked, as they did before there was one */
    if (nopi_build_flock(b, *fd, b->m->build_dir) < 0) {
        close(*fd);
        *fd = -1;
        nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "another build of '%s' has held "
                  "its lock for %.0f s", b->m->build_dir, nopi_build_lock_timeout(b));
        nopi_detail(b->err, "wait for it to finish, or stop it; the lock is '%s'",
                    b->lock_path);
        return -1;
    }
    return 0;
}

void nopi_build_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *p = nopi_path_join(dir, e->d_name);
            if (p)
                unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Under the lock nobody else is building here, so temporary files are leftovers of a build
 * that was killed: remove them. */
void nopi_build_remove_leftovers(builder *b)
{
    DIR *d = opendir(b->m->build_dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, ".neuronop-tmp-", 14) != 0)
            continue;
        char *p = nopi_path_join(b->m->build_dir, e->d_name);
        if (p) {
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                nopi_build_remove_tree(p);
            else
                unlink(p);
        }
        free(p);
    }
    closedir(d);
}

void nopi_build_clean_if_idle(builder *b)
{
    DIR *d = opendir(b->m->build_dir);
    if (!d)
        return;
    bool any = false;
    for (struct dirent *e; !any && (e = readdir(d)) != NULL;)
        any = strncmp(e->d_name, ".neuronop-tmp-", 14) == 0;
    closedir(d);
    if (!any)
        return;   /* the usual case: one readdir, no lock */
    int fd = open(b->lock_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)   /* nobody is building: they are leftovers */
        nopi_build_remove_leftovers(b);
    close(fd);
}

/* Writes data to path through a temporary file in the same folder and rename(2). */
int nopi_build_write_atomically(builder *b, const char *path, const char *data)
{
    char *tmp = nopi_path_join(b->tmpdir, "stamp");
    FILE *f = tmp ? fopen(tmp, "w") : NULL;
    bool ok = f && fputs(data, f) >= 0;
    ok = f && fclose(f) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    int saved = errno;
    if (!ok && tmp)
        unlink(tmp);
    free(tmp);
    if (!ok)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot write '%s': %s", path,
                         strerror(saved));
    return 0;
}
