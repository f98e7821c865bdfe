/*
 * usercode.c - confining a process before it runs user code (see usercode.h): the Landlock
 * rules of what it may read, an empty environment, the descriptors it keeps, and dying with
 * its parent and giving up its powers.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "internal.h"
#include "landlock.h"
#include "usercode.h"

/* The home folder /etc/passwd gives this process's user, into out (PATH_MAX bytes), read
 * directly: getpwuid may ask a name service over a socket, which the registration child's
 * filter ends it for.  false when there is none. */
static bool passwd_home(char *out)
{
    FILE *f = fopen("/etc/passwd", "re");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    unsigned long uid = (unsigned long)getuid();
    while (!found && fgets(line, sizeof line, f)) {
        /* name:password:uid:gid:gecos:home:shell, any of them empty */
        char *field[7] = { line }, *c = line;
        int n = 1;
        while (n < 7 && (c = strchr(c, ':'))) {
            *c++ = '\0';
            field[n++] = c;
        }
        if (n == 7 && field[2][0] && strtoul(field[2], NULL, 10) == uid && field[5][0] == '/')
            found = realpath(field[5], out) != NULL;
    }
    fclose(f);
    return found;
}

/* The folders that too_wide measures against, resolved once ("" when there is none). */
typedef struct wide {
    char home[PATH_MAX];      /* $HOME */
    char passwd[PATH_MAX];    /* the home /etc/passwd gives (HOME may be unset or other) */
    char tmp[PATH_MAX];       /* $TMPDIR */
} wide;

static void wide_folders(wide *w)
{
    const char *home = getenv("HOME"), *tmp = getenv("TMPDIR");
    if (!home || !realpath(home, w->home))
        w->home[0] = '\0';
    if (!passwd_home(w->passwd))
        w->passwd[0] = '\0';
    if (!tmp || !realpath(tmp, w->tmp))
        w->tmp[0] = '\0';
}

/* Whether letting a worker read folder (resolved) would open more than one library's files:
 * the root or a top-level folder (/tmp, /home, /root), the user's home or a folder above it,
 * or a shared temporary folder itself ($TMPDIR, /var/tmp, /dev/shm, /run/user or
 * /run/user/UID). */
static bool too_wide(const char *folder, const wide *w)
{
    if (!strchr(folder + 1, '/'))
        return true;   /* "/" or "/x" */
    if ((w->home[0] && nopi_path_within(w->home, folder)) ||
        (w->passwd[0] && nopi_path_within(w->passwd, folder)) ||
        strcmp(folder, w->tmp) == 0)
        return true;
    static const char *const shared[] = { "/var/tmp", "/dev/shm" };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(shared); i++)
        if (strcmp(folder, shared[i]) == 0)
            return true;
    static const char run[] = "/run/user";   /* itself, or one user's folder in it */
    size_t n = sizeof run - 1;
    return nopi_path_within(folder, run) && (!folder[n] || !strchr(folder + n + 1, '/'));
}

/* The library folder of a library whose file is in folder own (resolved), into out
 * (PATH_MAX bytes): the nearest of own and its parents, up to four, that holds a
 * neuronop.yaml; else, when own is called build (the default build_directory), its parent;
 * else own itself. */
static void library_folder(const char *own, char *out)
{
    strcpy(out, own);
    for (int up = 0; up < 5; up++) {
        size_t n = strlen(out);
        if (n + sizeof "/neuronop.yaml" <= PATH_MAX) {
            strcpy(out + n, "/neuronop.yaml");
            bool found = access(out, F_OK) == 0;
            out[n] = '\0';
            if (found)
                return;
        }
        char *slash = strrchr(out, '/');
        if (!slash || slash == out)
            break;
        *slash = '\0';
    }
    strcpy(out, own);   /* a manifest of another name: above the default build folder */
    char *slash = strrchr(out, '/');
    if (slash && slash > out && strcmp(slash + 1, "build") == 0)
        *slash = '\0';
}

/* Why each rule: the library folder holds the sources memcheck quotes; the system's and
 * LD_LIBRARY_PATH's folders what a library links to (libstdc++, libm); /proc/self the maps a
 * sanitizer reads.  Nothing else a user can read, which user code could otherwise print into
 * a CI log: not ~/.ssh, not /etc/shadow as root, not /proc of the user's other processes. */
static int confine_reads(const char *library, const char *given)
{
    static const char *const system_dirs[] = { "/usr", "/lib", "/lib64", "/etc/ld.so.cache",
                                               "/proc/self" };
    enum { MAX_PATH_DIRS = 16 };
    nopi_landlock_rule rules[NOPI_ARRAY_LEN(system_dirs) + MAX_PATH_DIRS + 2];
    int n = 0;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(system_dirs); i++)
        rules[n++] = (nopi_landlock_rule){ system_dirs[i], NOPI_LL_READ };
    wide w;
    wide_folders(&w);
    /* LD_LIBRARY_PATH's folders, each absolute and resolved, and none too wide: "." would
     * be the folder neuronop runs in */
    const char *ld = getenv("LD_LIBRARY_PATH");
    char *dirs = ld ? strdup(ld) : NULL, *save = NULL, *resolved[MAX_PATH_DIRS];
    int nresolved = 0;
    for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && nresolved < MAX_PATH_DIRS;
         d = strtok_r(NULL, ":", &save)) {
        char *r = d[0] == '/' ? realpath(d, NULL) : NULL;
        if (r && !too_wide(r, &w))
            rules[n++] = (nopi_landlock_rule){ resolved[nresolved++] = r, NOPI_LL_READ };
        else
            free(r);
    }
    char file[PATH_MAX], own[PATH_MAX], folder[PATH_MAX];   /* the rules borrow them */
    if (library && realpath(library, file)) {
        rules[n++] = (nopi_landlock_rule){ file, NOPI_LL_READ };
        strcpy(own, file);
        char *slash = strrchr(own, '/');
        *(slash > own ? slash : slash + 1) = '\0';   /* its folder; "/" keeps its slash */
        if (!given || !realpath(given, folder))
            library_folder(own, folder);
        const char *pick = !too_wide(folder, &w) ? folder : !too_wide(own, &w) ? own : NULL;
        if (pick)
            rules[n++] = (nopi_landlock_rule){ pick, NOPI_LL_READ };
    }
    int rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? nopi_landlock_restrict(rules, n, false)
                                                         : -1;
    free(dirs);
    for (int i = 0; i < nresolved; i++)
        free(resolved[i]);
    return rc;
}

/* Zeroes len bytes at s through pipe p, which, unlike memset, fails (EFAULT) rather than
 * crashing on memory that is not writable: a string a host program gave putenv may be a
 * literal. */
static void zero(int p[2], char *s, size_t len)
{
    static const char zeros[4096];
    while (len) {
        size_t n = len < sizeof zeros ? len : sizeof zeros;
        if (write(p[1], zeros, n) != (ssize_t)n)
            return;
        if (read(p[0], s, n) != (ssize_t)n) {
            char sink[sizeof zeros];   /* the pipe is left empty for the next string */
            (void)!read(p[0], sink, n);
            return;
        }
        s += n;
        len -= n;
    }
}

static void empty_environment(void)
{
    char stat[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, stat, sizeof stat - 1);
    if (fd >= 0)
        close(fd);
    const char *p = got > 0 ? (stat[got] = '\0', strrchr(stat, ')')) : NULL;
    /* after the command's name: fields 3 on; env_start and env_end are fields 50 and 51 */
    unsigned long start = 0, end = 0;
    for (int field = 3; p && field <= 51; field++) {
        if (!(p = strchr(p + 1, ' ')))
            break;
        if (field == 50)
            start = strtoul(p + 1, NULL, 10);
        else if (field == 51)
            end = strtoul(p + 1, NULL, 10);
    }
    extern char **environ;
    int zp[2];
    if (pipe2(zp, O_CLOEXEC) == 0) {
        /* the block first, in one go: the strings the program started with are there, and
         * only those set since (setenv, putenv) need zeroing one by one */
        bool block = start && end > start;
        if (block)
            zero(zp, (char *)start, end - start);
        for (char **e = environ; e && *e; e++)
            if (!block || (uintptr_t)*e < start || (uintptr_t)*e >= end)
                zero(zp, *e, strlen(*e));
        close(zp[0]);
        close(zp[1]);
    }
    clearenv();
}

int nopi_usercode_confine(const char *library, const char *folder)
{
    if (confine_reads(library, folder) != 0)
        return -1;
    empty_environment();
    return 0;
}

int nopi_usercode_keep_fds(int *fds, int n)
{
    /* first above any target, so that moving one never closes another still to be moved */
    int high[2];
    if (n < 0 || n > 2)
        return -1;
    for (int i = 0; i < n; i++)
        if ((high[i] = fcntl(fds[i], F_DUPFD, 16)) < 0)
            return -1;
    for (int i = 0; i < n; i++) {
        if (dup2(high[i], 3 + i) != 3 + i)
            return -1;
        fds[i] = 3 + i;
    }
    if (syscall(SYS_close_range, (unsigned)(3 + n), ~0u, 0u) != 0)
        for (int fd = 3 + n; fd < 1024; fd++)
            close(fd);
    return 0;
}

bool nopi_usercode_die_with(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    return getppid() == parent;   /* else the parent died before the line above */
}

void nopi_usercode_drop_powers(void)
{
    prctl(PR_SET_DUMPABLE, 0);
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
    memset(d, 0, sizeof d);
    syscall(SYS_capset, &h, d);
}
