/*
 * confine.c - a compiler child's limits, Landlock ruleset and seccomp filter (ccfilter.c), waiting for it under a
 * deadline, and the parent's check of the files diagnostics name (see confine.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/landlock.h"
#include "confine.h"

void nopi_confine_read(nopi_confine *c, const char *path)
{
    if (path && path[0] && c->nread < NOPI_CONFINE_MAX)
        c->read[c->nread++] = path;
}

int nopi_confine_resolve(nopi_confine *c)
{
    for (int i = 0; i <= c->nread; i++) {
        /* the system's headers are the toolchain's: g++ and tcc read /usr/include */
        const char *p = i < c->nread ? c->read[i] : "/usr";
        char *r = realpath(p, NULL);
        if (!r && errno == ENOMEM)
            return -1;
        if (r)
            c->resolved[c->nresolved++] = r;
    }
    nopi_ccfilter_build(&c->filter);
    return 0;
}

void nopi_confine_free(nopi_confine *c)
{
    for (int i = 0; i < c->nresolved; i++)
        free(c->resolved[i]);
    c->nresolved = 0;
}

/* ---- in the child ----------------------------------------------------------------------- */

unsigned long long nopi_confine_address_space(void)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtoull(buf, NULL, 10) * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* The system's program and library folders: what running g++ (its driver, cc1plus, as, ld,
 * their shared libraries) needs. */
static const char *const system_dirs[] = {
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc/alternatives",
    "/etc/ld.so.cache",
};

bool nopi_confine_landlock(void)
{
    return nopi_landlock_available();
}

/* Restricts this compiler child to c's folders (landlock.h); -1 when Landlock refused. */
static int landlock(const nopi_confine *c, bool exec)
{
    nopi_landlock_rule rules[NOPI_CONFINE_MAX + NOPI_ARRAY_LEN(system_dirs) + 2];
    int n = 0;
    for (int i = 0; i < c->nread; i++)
        rules[n++] = (nopi_landlock_rule){ c->read[i], NOPI_LL_READ };
    /* programs run only from the system's folders: never one from the library folder */
    if (exec)
        for (size_t i = 0; i < NOPI_ARRAY_LEN(system_dirs); i++)
            rules[n++] = (nopi_landlock_rule){ system_dirs[i], NOPI_LL_READ | NOPI_LL_EXEC };
    /* the output, and g++'s temporary files (TMPDIR points here) */
    if (c->write)
        rules[n++] = (nopi_landlock_rule){ c->write, NOPI_LL_READ | NOPI_LL_WRITE };
    rules[n++] = (nopi_landlock_rule){ "/dev/null", NOPI_LL_READ | NOPI_LL_WRITE };
    /* scoped: the seccomp filter cannot tell the user's processes from the compiler's own
     * children, Landlock can (where the kernel has its scopes) */
    return nopi_landlock_restrict(rules, n, true);
}

int nopi_confine_child(const nopi_confine *c, bool exec, unsigned long long address_base)
{
    /* its own process group, so the deadline ends cc1plus and as with the driver; and gone
     * with neuronop */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (c->cpu_seconds) {
        /* SIGXCPU at the limit, SIGKILL a second later if it is caught */
        struct rlimit r = { c->cpu_seconds, (rlim_t)c->cpu_seconds + 1 };
        if (setrlimit(RLIMIT_CPU, &r) != 0)
            return -1;
    }
    if (c->mem_mb) {
        rlim_t bytes = (rlim_t)address_base + (rlim_t)c->mem_mb * 1024 * 1024;
        struct rlimit r = { bytes, bytes }, inherited;
        /* never raise a smaller limit the user put on neuronop (ulimit -v): it holds for the
         * compile too, and nopi_confine_past names it */
        if (getrlimit(RLIMIT_AS, &inherited) == 0 && inherited.rlim_cur < bytes)
            r.rlim_cur = r.rlim_max = inherited.rlim_cur;
        if (setrlimit(RLIMIT_AS, &r) != 0)
            return -1;
        /* and what it writes: an object, or libtcc's preprocessed text, no bigger */
        struct rlimit f = { (rlim_t)c->mem_mb * 1024 * 1024, (rlim_t)c->mem_mb * 1024 * 1024 };
        if (setrlimit(RLIMIT_FSIZE, &f) != 0)
            return -1;
        signal(SIGXFSZ, SIG_DFL);
    }
    /* a core file of a compile bomb would be as big as the bomb */
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || landlock(c, exec) != 0)
        return -1;
    return nopi_ccfilter_install(&c->filter);
}

/* ---- in the parent ---------------------------------------------------------------------- */

/* Whether the resolved path r is in one of the folders c allows. */
static bool resolved_allowed(const nopi_confine *c, const char *r)
{
    bool ok = false;
    for (int i = 0; i < c->nresolved && !ok; i++)
        ok = nopi_path_within(r, c->resolved[i]);
    return ok;
}

bool nopi_confine_allows(const nopi_confine *c, const char *path)
{
    char *r = realpath(path, NULL);
    if (!r)
        return true;   /* nothing there to quote */
    bool ok = resolved_allowed(c, r);
    free(r);
    return ok;
}

/* "'name'", and where it resolves when that says more. */
static void describe(const char *name, const char *full, char *out, size_t size)
{
    char *r = realpath(full, NULL);
    if (r && strcmp(r, name) != 0)
        snprintf(out, size, "'%s' (it resolves to '%s')", name, r);
    else
        snprintf(out, size, "'%s'", name);
    free(r);
}

/* The file a refusal is about: "include file 'F' not found" (tcc, Landlock said no) or
 * "F: Permission denied" (gcc), F taken relative to source_dir when not absolute.  Fills
 * path and returns true when F exists and the build may not read it. */
static bool refused_file(const nopi_confine *c, const char *msg, const char *source_dir,
                         char *path, size_t size)
{
    char name[1024] = "";
    const char *p;
    size_t n = 0;
    if (strncmp(msg, "include file '", 14) == 0 && (p = strchr(msg + 14, '\'')) != NULL) {
        n = (size_t)(p - (msg + 14));
        p = msg + 14;
    } else if ((p = strstr(msg, ": Permission denied")) != NULL) {
        n = (size_t)(p - msg);
        p = msg;
    }
    if (!n || n >= sizeof name)
        return false;
    memcpy(name, p, n);
    name[n] = '\0';
    char *full = name[0] == '/' || strcmp(source_dir, ".") == 0 ? strdup(name)
                                                                : nopi_path_join(source_dir, name);
    bool refused = full && access(full, F_OK) == 0 && !nopi_confine_allows(c, full);
    if (refused)
        describe(name, full, path, size);
    free(full);
    return refused;
}

static void refuse(nop_diag *d, const char *described)
{
    d->severity = NOP_SEV_ERROR;
    d->where[0] = '\0';
    snprintf(d->msg, sizeof d->msg, "%.900s is outside the library folder: a build reads only "
             "the library's own files and the compiler's headers", described);
    snprintf(d->detail, sizeof d->detail, "copy what it needs into the library folder");
    nopi_diag_clean(d);   /* the name is a compiler's or a source's: any bytes */
}

bool nopi_confine_diag(const nopi_confine *c, nop_diag *d)
{
    char path[2100], source_dir[1024];
    nopi_strlcpy(source_dir, d->file, sizeof source_dir);
    char *slash = strrchr(source_dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(source_dir, ".");
    bool located_outside = d->file[0] && !nopi_confine_allows(c, d->file);
    if (located_outside)
        describe(d->file, d->file, path, sizeof path);
    else if (!refused_file(c, d->msg, source_dir, path, sizeof path))
        return false;
    if (located_outside) {
        /* "In file included from relu.c:3:": the user's line that led there */
        const char *inc = strstr(d->detail, "In file included from ");
        d->file[0] = '\0';
        d->line = d->col = 0;
        if (inc) {
            char where[1100];
            inc += 22;
            size_t k = strcspn(inc, "\n");
            if (k >= sizeof where)
                k = sizeof where - 1;
            memcpy(where, inc, k);
            where[k] = '\0';
            char *colon = strchr(where, ':');
            if (colon) {
                *colon = '\0';
                d->line = atoi(colon + 1);
                nopi_strlcpy(d->file, where, sizeof d->file);
            }
        }
    }
    refuse(d, path);
    return true;
}

void nopi_confine_refuse(nop_diag *d, const char *name)
{
    char path[2100];
    describe(name, name, path, sizeof path);
    refuse(d, path);
}

void nopi_confine_refuse_unreadable(nop_diag *d, const char *name)
{
    d->severity = NOP_SEV_ERROR;
    d->where[0] = '\0';
    snprintf(d->msg, sizeof d->msg, "'%.800s', as the compiler lists a file it read, names "
             "no file the build can check: without Landlock a build checks every file a "
             "compile read", name);
    snprintf(d->detail, sizeof d->detail, "a backslash, a tab or a newline in a file's "
             "name can make its listed name another's: rename the file (or build where the "
             "kernel has Landlock)");
    nopi_diag_clean(d);
}

void nopi_confine_refuse_ambiguous(nop_diag *d, const char *name)
{
    char path[2100];
    describe(name, name, path, sizeof path);
    refuse(d, path);
    snprintf(d->detail, sizeof d->detail, "it is also the name the assembler gives the "
             "source, and without Landlock a build cannot tell that name from a read of the "
             "file: run neuronop from another folder (or where the kernel has Landlock)");
}

void nopi_confine_past(const nopi_confine *c, nop_error *err, const char *name, bool time)
{
    if (time)
        nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "compiling '%s' went past %u s", name,
                  c->cpu_seconds);
    else
        nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "compiling '%s' went past %u MB", name,
                  c->mem_mb);
    struct rlimit as;
    if (!time && getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
        as.rlim_cur / (1024 * 1024) < c->mem_mb) {
        nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "compiling '%s' went past the %llu MB of "
                  "address space neuronop itself may use", name,
                  (unsigned long long)(as.rlim_cur / (1024 * 1024)));
        nopi_detail(err, "neuronop runs under a smaller limit (ulimit -v) than the compile's "
                    "own %u MB, and the compile inherits it: raise it, or build in a shell "
                    "without it", c->mem_mb);
        return;
    }
    nopi_detail(err, "a compile may use %u s and %u MB; a real kernel needs far less, so look "
                "for macros, templates or includes that multiply (or raise the limits with "
                "--compile-time and --compile-memory)", c->cpu_seconds, c->mem_mb);
}

/* ---- waiting ---------------------------------------------------------------------------- */

static void drain(int fd, nopi_confine_sink *sink, void *ctx, bool *open)
{
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0)
        sink(ctx, buf, (size_t)n);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        *open = false;
}

int nopi_confine_wait(pid_t pid, double deadline, int fd, nopi_confine_sink *sink, void *ctx,
                      int *status, double *cpu)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    double end = deadline > 0 ? nopi_now() + deadline : 0;
    bool open = fd >= 0, killed = false;
    for (;;) {
        struct pollfd p[2];
        int np = 0;
        if (open)
            p[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
        if (pidfd >= 0)
            p[np++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        int wait_ms = -1;
        if (end > 0) {
            double left = end - nopi_now();
            wait_ms = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        if (pidfd < 0 && (wait_ms < 0 || wait_ms > 10))
            wait_ms = 10;   /* no pidfd (kernels before 5.3): look again shortly */
        int r = np ? poll(p, (nfds_t)np, wait_ms) : 0;
        if (r < 0 && errno != EINTR)
            break;
        if (open && r > 0 && p[0].revents)
            drain(fd, sink, ctx, &open);
        bool ended;
        if (pidfd >= 0) {
            ended = r > 0 && p[np - 1].revents;
        } else {
            siginfo_t si = { 0 };
            ended = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                    si.si_pid == pid;
        }
        if (ended && !open)
            break;
        if (!ended && end > 0 && nopi_now() >= end) {
            kill(-pid, SIGKILL);   /* the group: g++ and what it started */
            kill(pid, SIGKILL);
            killed = true;
            end = 0;
        }
        /* ended with its pipe still open: read what it wrote to the end first */
    }
    if (pidfd >= 0)
        close(pidfd);
    /* Ended (or killed), not reaped yet: its group goes with it whatever its status, so
     * nothing a wrapper started ("sleep 600 &", then exec cc) outlives the compile */
    struct rusage ru = { 0 };
    if (nopi_reap_group_usage(pid, status, &ru) != 0)
        return -1;
    *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    return killed ? 1 : 0;
}

/* Reads the next name of a make-style list at *p into name (size bytes), undoing its
 * writer's escapes.  Both g++ and gas write a space in a name as "\ " and a '$' as "$$",
 * g++ a '#' as "\#"; but each spells a backslash, a tab and a newline in a name its own way,
 * some not at all (gas writes a newline as it is, g++ a final backslash as it is), so a name
 * read back from them could be another one.  Such a name sets *unreadable, and is refused:
 * a build checks only what it reads plainly.  The list is one rule, its lines continued
 * with a space and a backslash; more after its last line is a name with a newline in it.
 * False at the end of the list. */
static bool next_name(const char **p, bool gas, char *name, size_t size, bool *unreadable)
{
    const char *s = *p;
    size_t n = 0;
    *unreadable = false;
    for (;;) {   /* the separators, and a line's continuation */
        if (*s == ' ' || *s == '\t')
            s++;
        else if (s[0] == '\\' && s[1] == '\n')
            s += 2;
        else
            break;
    }
    if (*s == '\n') {   /* the rule's end: nothing may follow */
        s += strspn(s, " \t\r\n");
        *unreadable = *s != '\0';
        nopi_strlcpy(name, s, size < 80 ? size : 80);   /* what follows, for the message */
        name[strcspn(name, "\n")] = '\0';
        *p = s + strlen(s);
        return *unreadable;
    }
    if (!*s)
        return false;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
        char c;
        if (s[0] == '\\' && (s[1] == ' ' || (!gas && s[1] == '#'))) {
            c = s[1];
            s += 2;
        } else if (s[0] == '$' && s[1] == '$') {
            c = '$';
            s += 2;
        } else if (s[0] == '\\' && s[1] && s[1] != '\n') {
            *unreadable = true;   /* before a backslash, a tab or a letter: kept as written */
            if (n + 1 < size)
                name[n++] = *s;
            c = s[1];
            s += 2;
        } else {
            *unreadable = *unreadable || *s == '\\' || *s == '$';   /* a final backslash */
            c = *s++;
        }
        if (n + 1 < size)
            name[n++] = c;
        else
            *unreadable = true;   /* longer than any path */
    }
    name[n] = '\0';
    *p = s;
    return true;
}

/* Whether the folder of path resolves to `dir` (resolved): a compile's temporary file, gone
 * once the compile ended (gas lists the assembly g++ wrote for it). */
static bool in_folder(const char *path, const char *dir)
{
    char *parent = dir ? nopi_dirname(path) : NULL;
    char *r = parent ? realpath(parent, NULL) : NULL;
    bool in = r && strcmp(r, dir) == 0;
    free(parent);
    free(r);
    return in;
}

nopi_deps_verdict nopi_confine_deps(const nopi_confine *c, const nopi_deps *d, char *bad,
                                    size_t size)
{
    char *text = NULL;
    if (nopi_read_file(d->path, &text, NULL) != 0) {
        nopi_strlcpy(bad, d->path, size);
        return d->complete ? NOPI_DEPS_UNLISTED : NOPI_DEPS_OK;
    }
    char *tmp = c->write ? realpath(c->write, NULL) : NULL;
    nopi_deps_verdict v = NOPI_DEPS_OK;
    /* "target: prerequisite ...": the target is the object, in the build's own folder */
    char *p = text;
    while ((p = strchr(p, ':')) != NULL && p[1] && !strchr(" \t\n", p[1]))
        p++;
    char name[4096];
    bool unreadable;
    for (const char *q = p ? p + 1 : NULL;
         q && v == NOPI_DEPS_OK && next_name(&q, d->gas, name, sizeof name, &unreadable);) {
        bool file = d->file && strcmp(name, d->file) == 0;
        char *r = unreadable ? NULL : realpath(name, NULL);   /* NULL: nothing there too */
        if (unreadable) {
            if (d->complete)
                v = NOPI_DEPS_UNREADABLE;
        } else if (!r) {
            if (d->complete && !file && !in_folder(name, tmp))
                v = NOPI_DEPS_UNREADABLE;
        } else if (!resolved_allowed(c, r) && !(tmp && nopi_path_within(r, tmp))) {
            v = file ? NOPI_DEPS_AMBIGUOUS : NOPI_DEPS_OUTSIDE;
        }
        free(r);
        if (v != NOPI_DEPS_OK)
            nopi_strlcpy(bad, name, size);
    }
    free(tmp);
    free(text);
    return v;
}

/* ---- paths that must stay in the library folder ----------------------------------------- */

/* True when path, resolved (the part that exists, symlinks and all; a missing rest must not
 * climb with ".."), is root or inside it.  resolved (may be NULL) gets what path resolves to. */
bool nopi_confine_within(const char *root, const char *path, char *resolved, size_t size)
{
    if (resolved && size)
        snprintf(resolved, size, "%s", path);
    char *r_root = realpath(root, NULL);
    char head[4096];
    if (!r_root || strlen(path) >= sizeof head) {
        free(r_root);
        return false;
    }
    strcpy(head, path);
    const char *rest = "";
    char *r = NULL;
    /* a part missing when realpath looked may be there when lstat looks: another build of
     * the same folder made it in between; look again, a few times */
    int raced = 0;
    for (;;) {
        if ((r = realpath(head[0] ? head : ".", NULL)) != NULL || errno != ENOENT)
            break;
        /* missing, or a link to what is missing ("pipe:[5]", the target of /proc/self/fd/N
         * with N a pipe): such a link would be followed where it leads once opened */
        struct stat st;
        if (head[0] && lstat(head, &st) == 0) {
            if (!S_ISLNK(st.st_mode) && raced++ < 8)
                continue;
            free(r_root);
            return false;
        }
        char *slash = strrchr(head, '/');
        rest = path + (slash ? (size_t)(slash - head) + 1 : 0);
        if (!slash) {
            head[0] = '\0';
        } else {
            *slash = '\0';
            if (slash == head)   /* "/x": the root exists */
                strcpy(head, "/");
        }
    }
    /* the part still to be created, normalised: "a/../b" is "b"; a ".." that would climb
     * into the part that exists counts as leaving (it could pass through a symlink) */
    char tail[4096] = "";
    bool climbs = false;
    for (const char *p = rest; *p && !climbs;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && strncmp(p, "..", 2) == 0) {
            char *slash = strrchr(tail, '/');
            if (!tail[0])
                climbs = true;
            else if (slash)
                *slash = '\0';
            else
                tail[0] = '\0';
        } else if (n && !(n == 1 && p[0] == '.') && strlen(tail) + n + 2 < sizeof tail) {
            if (tail[0])
                strcat(tail, "/");
            strncat(tail, p, n);
        }
        p += n + (p[n] == '/');
    }
    rest = tail;
    bool ok = r && !climbs && nopi_path_within(r, r_root);
    if (resolved)
        snprintf(resolved, size, "%s%s%s", r ? r : path, r && rest[0] ? "/" : "",
                 r ? rest : "");
    free(r);
    free(r_root);
    return ok;
}
