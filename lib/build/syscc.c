/*
 * syscc.c - runs the system compilers and reads their messages (see syscc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syscc.h"

extern char **environ;

void nopi_argv_add(nopi_argv *a, const char *s)
{
    if (a->failed)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 32;
        char **v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) {
            a->failed = true;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    if (!(a->v[a->n] = strdup(s))) {
        a->failed = true;
        return;
    }
    a->v[++a->n] = NULL;
}

void nopi_argv_addf(nopi_argv *a, const char *fmt, ...)
{
    char buf[2200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    nopi_argv_add(a, buf);
}

void nopi_argv_free(nopi_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

bool nopi_is_clang(const char *program)
{
    const char *base = strrchr(program, '/');
    return strstr(base ? base + 1 : program, "clang") != NULL;
}

const char *nopi_cxx_program(const char *manifest_value)
{
    const char *env = getenv("CXX");
    if (manifest_value && manifest_value[0])
        return manifest_value;
    return env && env[0] ? env : "g++";
}

const char *nopi_cc_program(void)
{
    const char *env = getenv("CC");
    return env && env[0] ? env : "cc";
}

/* The environment with LC_ALL=C: the compilers' messages, which neuronop reads, in English
 * with ASCII quotes; and TMPDIR=tmpdir (when given), the one folder a confined compiler may
 * write its temporary files in.  malloc'd array of borrowed strings but TMPDIR's, which
 * shares the allocation. */
static char **c_locale_env(const char *tmpdir)
{
    size_t n = 0;
    while (environ[n])
        n++;
    size_t tlen = tmpdir ? strlen(tmpdir) + 8 : 0;
    char **env = calloc(1, (n + 3) * sizeof *env + tlen);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LC_ALL=", 7) != 0 && strncmp(environ[i], "TMPDIR=", 7) != 0)
            env[k++] = environ[i];
    env[k++] = (char *)"LC_ALL=C";
    if (tmpdir) {
        char *t = (char *)(env + n + 3);
        snprintf(t, tlen, "TMPDIR=%s", tmpdir);
        env[k++] = t;
    }
    return env;
}

/* The program cannot be run: say which package gives it. */
static int cannot_run(const nopi_tool_job *j, int e, nop_error *err)
{
    nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot run '%s': %s", j->argv.v[0],
              strerror(e));
    if (e == ENOENT)
        nopi_detail(err, "install the compiler ('apt-get install g++' gives g++ and cc), or "
                    "name another with CXX (C++) or CC (compiler: cc)");
    return -1;
}

/* The guardian's death signal: when neuronop has ended, the compile's whole group goes.
 * (The signal also comes when the thread that forked it ends: libneuronop is a library, and
 * its caller may build from a thread it later ends; then the parent is still neuronop.) */
static pid_t guarded_for;

static void on_parent_gone(int sig)
{
    (void)sig;
    if (getppid() != guarded_for)
        kill(0, SIGKILL);
}

/* In a tool's child, confined and the leader of its own process group: forks the tool and
 * stays as its guardian, ending as the tool ends (its exit status or its signal, so what
 * nopi_confine_wait reads is the tool's).  A death signal is not inherited: the compiler
 * driver's own children (cc1plus, as) outlived a neuronop that died or was killed and ran
 * on to their CPU limit; the guardian's kills the whole group.  parent is neuronop's pid,
 * to see whether it ended before the signal was asked for; report, the pipe the tool's exec
 * error goes through, which the guardian closes (the parent reads it to its end).  Returns
 * 0 in the tool, -1 in the guardian when the fork failed (errno). */
static int guard(pid_t parent, int report)
{
    guarded_for = parent;
    signal(SIGHUP, on_parent_gone);
    sigset_t hup;   /* a neuronop started with SIGHUP blocked passes the mask on (a review's
                     * find: the death signal then stayed pending for ever) */
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    if (sigprocmask(SIG_UNBLOCK, &hup, NULL) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGHUP, 0, 0, 0) != 0 || getppid() != parent)
        kill(0, SIGKILL);
    pid_t tool = fork();
    if (tool <= 0) {
        if (tool == 0)
            signal(SIGHUP, SIG_DFL);   /* (the tool's own death signal was cleared by fork) */
        return tool == 0 ? 0 : -1;
    }
    close(report);
    int st = 0;
    while (waitpid(tool, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    signal(WTERMSIG(st), SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, WTERMSIG(st));
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(WTERMSIG(st));
    _exit(128 + WTERMSIG(st));
}

/* fork and exec: between them the child sends its output to the log, confines itself
 * (confine.h), forks the tool under its guard (guard) and, when exec fails, reports errno
 * through a close-on-exec pipe. */
static int spawn(nopi_tool_job *j, const nopi_confine *c, char **env, pid_t *pid,
                 nop_error *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cannot_run(j, errno, err);
    pid_t self = getpid();
    *pid = fork();
    if (*pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return cannot_run(j, e, err);
    }
    if (*pid == 0) {
        /* its own process group before anything else runs, confined or not: the group is
         * what nopi_confine_wait kills when the tool ends, so it must never be neuronop's */
        setpgid(0, 0);
        close(fds[0]);
        int e = 0;
        int log = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (log < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
            e = errno ? errno : EIO;
        else if (c && nopi_confine_child(c, true, 0) != 0)
            e = errno ? errno : EPERM;
        else if (guard(self, fds[1]) != 0)
            e = errno ? errno : EAGAIN;
        else
            execvpe(j->argv.v[0], j->argv.v, env);
        if (!e)
            e = errno;
        if (write(fds[1], &e, sizeof e) != (ssize_t)sizeof e)
            _exit(126);
        _exit(127);
    }
    setpgid(*pid, *pid);   /* as the child does: whichever runs first */
    close(fds[1]);
    int e = 0;
    ssize_t got;
    while ((got = read(fds[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    if (got != (ssize_t)sizeof e)
        return 0;   /* exec worked: the pipe closed */
    nopi_reap_group(*pid);
    return cannot_run(j, e, err);
}

int nopi_tool_log(const char *path, char **text, unsigned long long *more)
{
    size_t len = 0;
    unsigned long long whole = 0;
    *more = 0;
    if (nopi_read_part(path, NOPI_LOG_KEEP, false, text, &len, &whole) != 0)
        return -1;
    char *nl = whole > len ? strrchr(*text, '\n') : NULL;
    if (nl) {   /* no half line: a cut "file:line: error" would read as another message */
        nl[1] = '\0';
        len = (size_t)(nl + 1 - *text);
    }
    *more = whole > len ? whole - len : 0;
    return 0;
}

/* True when the log's start or its end has one of the words (a tool that says it ran out
 * says so last, after whatever it printed before). */
static bool log_says(const char *path, const char *const *words, size_t n)
{
    bool found = false;
    for (int tail = 0; tail < 2 && !found; tail++) {
        char *text = NULL;
        unsigned long long whole = 0;
        size_t len = 0;
        if (nopi_read_part(path, NOPI_LOG_KEEP, tail, &text, &len, &whole) != 0)
            break;
        for (size_t i = 0; i < n && !found; i++)
            found = strstr(text, words[i]) != NULL;
        free(text);
        if (whole <= len)
            break;   /* the start was all of it */
    }
    return found;
}

/* What a job's end says about its limits: the log's words for running out (g++, cc1plus,
 * as and ld each say it their own way), the CPU signal, or the deadline.  Under a memory
 * limit a program may also die before it can say so: the loader unable to map a shared
 * library of cc1plus's, or, under a limit of LOW_LIMIT_MB or less, cc1 crashing as an
 * allocation fails ("internal compiler error: Segmentation fault"); under a higher one
 * such a crash is the compiler's own (a stack overflow on 60000 nested parentheses), and
 * reported as it is. */
enum { LOW_LIMIT_MB = 256 };
static void judge(nopi_tool_job *j, const nopi_confine *c, int waited, int status,
                  double cpu_seconds)
{
    static const char *const out_of_memory[] = {
        "out of memory", "memory exhausted", "Cannot allocate memory", "std::bad_alloc",
        "File size limit exceeded",
    };
    static const char *const map_failed[] = { "failed to map segment" };
    static const char *const crashed[] = { "internal compiler error: Segmentation fault" };
    static const char *const cpu[] = { "CPU time limit exceeded" };
    bool memory = log_says(j->log, out_of_memory, NOPI_ARRAY_LEN(out_of_memory)) ||
                  (c->mem_mb && log_says(j->log, map_failed, 1)) ||
                  (c->mem_mb && c->mem_mb <= LOW_LIMIT_MB && log_says(j->log, crashed, 1));
    bool time = waited == 1 || log_says(j->log, cpu, 1);
    memory = memory || (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ);
    time = time || (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) ||
           (c->cpu_seconds && cpu_seconds >= c->cpu_seconds);
    j->limit = time ? NOPI_LIMIT_TIME : memory ? NOPI_LIMIT_MEMORY : NOPI_LIMIT_NONE;
}

int nopi_tools_run(nopi_tool_job *jobs, int n, int parallel, const nopi_confine *c,
                   nop_error *err)
{
    pid_t *pids = calloc((size_t)(n ? n : 1), sizeof *pids);
    double *started_at = calloc((size_t)(n ? n : 1), sizeof *started_at);
    nopi_tool_job **todo = calloc((size_t)(n ? n : 1), sizeof *todo);
    char **env = c_locale_env(c ? c->write : NULL);
    if (!pids || !started_at || !todo || !env) {
        free(todo);
        free(pids);
        free(started_at);
        free(env);
        return nopi_nomem(err);
    }
    int started = 0, waited = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        if (jobs[i].done)
            continue;
        jobs[i].status = -1;
        jobs[i].limit = NOPI_LIMIT_NONE;
        if (jobs[i].argv.failed)
            rc = nopi_nomem(err);
    }
    /* the done jobs are left out: todo[k] is the k-th job to run */
    int ntodo = 0;
    for (int i = 0; i < n; i++)
        if (!jobs[i].done)
            todo[ntodo++] = &jobs[i];
    n = ntodo;
    if (parallel < 1)
        parallel = 1;
    /* Jobs are waited for in the order they started, each by its own pid: a library must
     * not reap children of the program it is part of (waitpid(-1) would). */
    while (waited < started || (rc == 0 && started < n)) {
        while (rc == 0 && started < n && started - waited < parallel) {
            started_at[started] = nopi_now();
            if (spawn(todo[started], c, env, &pids[started], err) != 0)
                rc = -1;
            else
                started++;
        }
        if (waited == started)
            break;
        int status = 0;
        double cpu = 0, left = 0;
        if (c && c->cpu_seconds) {   /* each job's deadline runs from its own start */
            left = started_at[waited] + c->cpu_seconds - nopi_now();
            left = left > 0.001 ? left : 0.001;
        }
        int w = nopi_confine_wait(pids[waited], left, -1, NULL, NULL, &status, &cpu);
        if (w < 0)
            status = 0x7f00;   /* lost: report it as exit status 127 */
        todo[waited]->status = WIFEXITED(status) ? WEXITSTATUS(status)
                              : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        if (c && todo[waited]->status != 0)
            judge(todo[waited], c, w, status, cpu);
        waited++;
    }
    free(todo);
    free(pids);
    free(started_at);
    free(env);
    return rc;
}

/* ---- reading gcc's messages ------------------------------------------------------------- */

/* "file:line:col: kind: message" (col optional); false for any other line. */
typedef struct gline {
    char file[1024];
    int line, col;
    const char *kind;     /* "error", "fatal error", "warning", "note", or NULL */
    const char *msg;      /* after "kind: ", or the text after the location */
} gline;

static bool parse_gline(const char *s, gline *g)
{
    memset(g, 0, sizeof *g);
    const char *p = s;
    /* the file ends at the first ":<digits>:" */
    while ((p = strchr(p, ':')) != NULL) {
        char *end;
        long line = strtol(p + 1, &end, 10);
        if (end > p + 1 && *end == ':' && line > 0) {
            size_t n = (size_t)(p - s);
            if (n >= sizeof g->file)
                n = sizeof g->file - 1;
            memcpy(g->file, s, n);
            g->line = (int)line;
            p = end + 1;
            long col = strtol(p, &end, 10);
            if (end > p && *end == ':') {
                g->col = (int)col;
                p = end + 1;
            }
            break;
        }
        p++;
    }
    if (!p)
        return false;
    while (*p == ' ')
        p++;
    static const char *const kinds[] = { "fatal error: ", "error: ", "warning: ", "note: " };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(kinds); i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(p, kinds[i], n) == 0) {
            g->kind = kinds[i];
            g->msg = p + n;
            return true;
        }
    }
    g->msg = p;
    return true;
}

/* A header the user did not write: neuronop's, or the system's (an error inside <vector> is
 * reported where the user's code led to it, like one inside torch.h). */
static bool is_own(const char *file, const char *own_dir)
{
    size_t n = own_dir ? strlen(own_dir) : 0;
    return (n && strncmp(file, own_dir, n) == 0) || strncmp(file, "/usr/", 5) == 0;
}

/* Copies the message, dropping gcc's "[-Wflag]" suffix noise only when asked; quotes stay. */
static void set_diag(nop_diag *d, enum nop_severity sev, const gline *g, const char *msg)
{
    memset(d, 0, sizeof *d);
    d->severity = sev;
    nopi_strlcpy(d->file, g->file, sizeof d->file);
    d->line = g->line;
    d->col = g->col;
    nopi_strlcpy(d->msg, msg, sizeof d->msg);
}

static void add_detail(nop_diag *d, const char *text)
{
    size_t used = strlen(d->detail);
    snprintf(d->detail + used, sizeof d->detail - used, "%s%s", used ? "\n" : "", text);
}

/* Where the user wrote the macro that an error in one of neuronop's own headers came from:
 * the first "in expansion of macro" note in a user file among the notes that follow it in
 * rest (torch/detail/unported.h's AT_DISPATCH_ macros fail in the header, and g++'s "In file
 * included from" would name the #include line).  false when there is none. */
static bool macro_site(const char *rest, const char *own_dir, gline *out)
{
    char buf[2048];
    for (const char *line = rest; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, line, n);
        buf[n] = '\0';
        line = nl ? nl + 1 : NULL;
        gline g;
        if (!parse_gline(buf, &g) || !g.kind)
            continue;
        if (strcmp(g.kind, "note: ") != 0)
            return false;   /* the next diagnostic: none for this one */
        if (strstr(g.msg, "in expansion of macro") && !is_own(g.file, own_dir)) {
            *out = g;
            out->msg = NULL;   /* (it pointed into buf) */
            return true;
        }
    }
    return false;
}

/* What follows the first error in the log: the notes g++ gives with it, in the user's
 * files ("'std::optional' is only available from C++17 onwards"), up to two, and how many
 * more errors there are, so the user knows the first is not the last. */
static void add_followers(char *rest, const char *own_dir, nop_diag *d)
{
    int notes = 0, more = 0;
    bool own_notes = true;   /* the notes still belong to the first error */
    for (char *line = rest, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        gline g;
        if (!parse_gline(line, &g) || !g.kind)
            continue;
        if (strcmp(g.kind, "note: ") != 0) {
            own_notes = false;
            more += strcmp(g.kind, "warning: ") != 0;
            continue;
        }
        /* (the expansion of the macro the diagnostic was placed at says nothing more) */
        bool here = strcmp(g.file, d->file) == 0 && g.line == d->line &&
                    strstr(g.msg, "in expansion of macro");
        if (own_notes && notes < 2 && !is_own(g.file, own_dir) && !here) {
            char text[600];
            snprintf(text, sizeof text, "note: %s", g.msg);
            add_detail(d, text);
            notes++;
        }
    }
    if (more) {
        char text[120];
        snprintf(text, sizeof text, "(%d more error%s after this one: fix it and build again)",
                 more, more == 1 ? "" : "s");
        add_detail(d, text);
    }
}

int nopi_gcc_log(const char *log_path, const char *own_dir, const char *fallback,
                 nop_diag_fn *diag, void *ctx, nop_error *err)
{
    char *text = NULL;
    unsigned long long more;
    if (nopi_tool_log(log_path, &text, &more) != 0)
        return nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "%s failed", fallback);
    /* The user line that led into the current header: the last "required from here" or
     * "In file included from" in a user file, and the template being instantiated. */
    gline user = { 0 };
    char inst[400] = "";
    bool have_user = false, failed = false;
    for (char *line = text, *next; line && *line && !failed; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        const char *s = line;
        bool included = strncmp(s, "In file included from ", 22) == 0 ||
                        strncmp(s, "                 from ", 22) == 0;
        if (included)
            s += 22;
        if (!included && (strstr(s, ": In function ") || strstr(s, ": At global scope") ||
                          strstr(s, ": In member function ")))
            inst[0] = '\0', have_user = false;   /* a new diagnostic's context begins */
        const char *in = strstr(s, ": In instantiation of '");
        if (in) {   /* "header: In instantiation of 'T':" has no line number */
            nopi_strlcpy(inst, in + 23, sizeof inst);
            char *q = strrchr(inst, '\'');
            if (q)
                *q = '\0';
            continue;
        }
        gline g;
        if (!parse_gline(s, &g))
            continue;
        if (!g.kind) {
            const char *req = strstr(g.msg, "required from here");
            if ((included || req) && !is_own(g.file, own_dir) && (!have_user || req)) {
                user = g;
                have_user = true;
            }
            continue;
        }
        if (strcmp(g.kind, "note: ") == 0)
            continue;
        bool warning = strcmp(g.kind, "warning: ") == 0;
        gline site;
        const gline *at = !is_own(g.file, own_dir) ? &g
                          : macro_site(next, own_dir, &site) ? &site
                          : have_user ? &user : &g;
        nop_diag d;
        set_diag(&d, warning ? NOP_SEV_WARNING : NOP_SEV_ERROR, at, g.msg);
        char hint[300] = "";
        char source[512];
        bool have_source = d.line > 0 && nopi_read_line(d.file, d.line, source,
                                                          sizeof source) == 0;
        /* the torch wording is for C++ sources only: a C kernel built by cc has no torch */
        const char *ext = strrchr(d.file, '.');
        bool cxx = ext && strcmp(ext, ".c") != 0 && strcmp(ext, ".h") != 0;
        bool reworded = !warning && cxx &&
                        nopi_cxx_reword(d.msg, sizeof d.msg, have_source ? source : NULL, hint,
                                        sizeof hint);
        /* torch/torch.h's own assertions and the subset's messages are whole sentences about
         * the user's line: the template they fired in is noise */
        bool whole = (reworded && strstr(d.msg, "is not in the device's torch subset")) ||
                     strstr(g.file, "/torch/detail/");
        static const char sa[] = "static assertion failed: ";
        if (whole && strncmp(d.msg, sa, sizeof sa - 1) == 0)
            memmove(d.msg, d.msg + sizeof sa - 1, strlen(d.msg) - (sizeof sa - 2));
        if (at != &g && !whole) {
            char where[1500];
            /* register.h checks each parameter type P as param<P>: name P */
            static const char param[] = "struct torch::neuron_detail::param<";
            size_t np = sizeof param - 1, ni = strlen(inst);
            if (strncmp(inst, param, np) == 0 && ni > np && inst[ni - 1] == '>')
                snprintf(where, sizeof where, "the parameter type is '%.*s'",
                         (int)(ni - np - 1), inst + np);
            else
                snprintf(where, sizeof where, "in %s", inst);
            if (inst[0])
                add_detail(&d, where);
            size_t own = strlen(own_dir);
            const char *hdr = g.file;
            if (strncmp(g.file, own_dir, own) == 0)
                hdr += own + (g.file[own] == '/');
            snprintf(where, sizeof where, "reported in %s:%d", hdr, g.line);
            add_detail(&d, where);
        }
        if (hint[0])
            add_detail(&d, hint);
        nopi_diag_add_excerpt(&d);
        if (warning) {
            if (diag && !is_own(d.file, own_dir))
                diag(ctx, &d);
            continue;
        }
        err->kind = NOP_ERR_COMPILE;
        err->diag = d;
        failed = true;
        add_followers(next, own_dir, &err->diag);
    }
    free(text);
    if (!failed)
        return 0;
    return -1;
}
