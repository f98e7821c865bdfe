/*
 * register.c - the ops of a NEURON_LIBRARY registration, and the C++ symbols the glue calls
 * (see builder.h).
 *
 * The registration is user code: it runs only in a child process (run_registration), over
 * a probe library of the shape objects alone, with a time limit, and reports each m.def
 * through a pipe.  neuronop never loads the user's code into its own process to build.
 * Each op's kernel is then found in the compute objects by its mangled name, whose
 * parameter list must be the shape function's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/usercode.h"
#include "builder.h"
#include "base/mangle.h"
#include "neuronop/registry.h"

#define REGISTRATION_SECONDS 10.0

/* ---- the child ---------------------------------------------------------------------------- */

/* Writes s with tabs and newlines replaced, so one record stays one line. */
static void put_field(FILE *f, const char *s)
{
    for (; s && *s; s++)
        fputc(*s == '\t' || *s == '\n' ? '?' : *s, f);
    fputc('\t', f);
}

static void on_library(nt__registrar *r, const char *ns, const char *file, int line)
{
    FILE *f = r->ctx;
    fputs("L\t", f);
    put_field(f, ns);
    put_field(f, file);
    fprintf(f, "%d\n", line);
}

static void on_def(nt__registrar *r, const nt__reg_def *d)
{
    FILE *f = r->ctx;
    Dl_info info;
    const char *sym = dladdr(d->shape, &info) && info.dli_saddr == d->shape && info.dli_sname
                          ? info.dli_sname : "";
    fputs("D\t", f);
    put_field(f, d->op);
    put_field(f, d->kernel);
    put_field(f, sym);
    put_field(f, d->file);
    fprintf(f, "%d\t%d\t", d->line, d->nargs);
    for (int i = 0; i < d->nargs && i < NT_REG_MAX_ARGS; i++)
        fprintf(f, "%d%c", d->kinds[i], d->byref[i] ? 'r' : 'v');
    fputc('\n', f);
}

/* The registration child's confinement, before the probe is loaded: an allow-list, as a
 * worker's (isolate/seccomp.c), of what loading a library and calling m.def need (reading
 * files, memory, its pipe, time, signals to itself); every other call ends the child
 * (SIGSYS), which the parent reports.  A deny-list let registration code through what it did
 * not name: openat2 opened files for writing outside the library (and, as root,
 * /proc/PID/mem of neuronop read-write), tgkill killed neuronop, prlimit64 set its limits.
 * -1 when the filter cannot be set up. */
static int confine(void)
{
    static const char *const always[] = {
        "read", "pread64", "readv", "write", "writev", "close", "lseek", "fstat", "newfstatat",
        "statx", "stat", "lstat", "access", "faccessat", "faccessat2", "getcwd", "readlink",
        "readlinkat", "mmap", "munmap", "mremap", "mprotect", "madvise", "brk", "futex",
        "sched_yield", "sched_getaffinity", "set_robust_list", "rseq", "set_tid_address",
        "exit", "exit_group", "restart_syscall", "clock_gettime", "clock_getres",
        "gettimeofday", "clock_nanosleep", "nanosleep", "getpid", "gettid", "getuid",
        "geteuid", "getgid", "getegid", "getrandom", "sysinfo", "rt_sigaction",
        "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
    };
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx)
        return -1;
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    for (size_t i = 0; i < NOPI_ARRAY_LEN(always) && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name(always[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
    }
    /* files opened for reading only */
    const scmp_datum_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                              SCMP_A2(SCMP_CMP_MASKED_EQ, writes, 0));
    if (rc == 0 && seccomp_syscall_resolve_name("open") != __NR_SCMP_ERROR)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, writes, 0));
    /* stdio's terminal query; descriptors' flags (no F_SETOWN, F_SETSIG, O_ASYNC: signals
     * to a process of the caller's choosing) */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_EQ, TCGETS, 0));
    static const int fd_cmds[] = { F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD, F_GETFL };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(fd_cmds) && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
                              SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)fd_cmds[i], 0));
    /* abort() and raise() signal the child itself; glibc reads its own limits, sets none */
    scmp_datum_t self = (scmp_datum_t)getpid();
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
                              SCMP_A0(SCMP_CMP_EQ, self, 0));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                              SCMP_A0(SCMP_CMP_EQ, self, 0));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2,
                              SCMP_A0(SCMP_CMP_EQ, 0, 0), SCMP_A2(SCMP_CMP_EQ, 0, 0));
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc == 0 ? 0 : -1;
}

/*
 * Runs the registration function of the probe library `probe` in a child process and
 * returns what it printed (malloc'd) in *out.  The one place where build-time user code
 * runs: a sandbox replaces this function, not its callers.
 */
static int run_registration(const char *probe, char **out, nop_error *err)
{
    *out = NULL;
    int fds[2];
    if (pipe(fds) != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot create a pipe: %s",
                         strerror(errno));
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot start a process: %s",
                         strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        /* its pipe as descriptor 3 and nothing else of neuronop's (the build's lock, the
         * compile child's socket); what the user's code prints is not neuronop's output, nor
         * is what it reads the user's input */
        int keep[1] = { fds[1] };
        int null = nopi_usercode_keep_fds(keep, 1) == 0 ? open("/dev/null", O_RDWR) : -1;
        if (null < 0)
            _exit(3);
        for (int fd = 0; fd <= 2; fd++)
            if (dup2(null, fd) != fd)
                _exit(3);
        if (null > 2)
            close(null);
        FILE *f = fdopen(keep[0], "w");
        if (!f)
            _exit(3);
        /* before the load: loading runs the probe's load-time code, if it has any (the
         * check that refuses it comes after the registration, which says the ops); it may
         * read only what a kernel may, nor its environment (usercode.h): what it prints
         * reaches the user's log in an error.  Landlock first: the filter forbids its calls */
        if (!nopi_usercode_die_with(parent))
            _exit(3);
        nopi_usercode_drop_powers();
        if (nopi_usercode_confine(probe, NULL) != 0) {
            fputs("E\tcannot confine the registration (Landlock)\n", f);
            _exit(3);
        }
        if (confine() != 0) {
            fputs("E\tcannot confine the registration (seccomp)\n", f);
            _exit(3);
        }
        void *h = dlopen(probe, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(f, "E\t%s\n", dlerror());
            _exit(3);
        }
        void (*reg)(nt__registrar *) = (void (*)(nt__registrar *))dlsym(h, NT_REG_SYMBOL);
        nt__registrar r = { f, on_library, on_def };
        if (reg)
            reg(&r);
        fputs("END\n", f);
        fflush(f);
        _exit(0);
    }
    close(fds[1]);
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    double deadline = nopi_now() + REGISTRATION_SECONDS;
    bool timed_out = false;
    for (;;) {
        int left = (int)((deadline - nopi_now()) * 1000);
        struct pollfd p = { fds[0], POLLIN, 0 };
        if (left <= 0 || poll(&p, 1, left) == 0) {
            timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        char buf[4096];
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        nopi_sb_add(&sb, buf, (size_t)n);
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    char *text = nopi_sb_take(&sb);
    if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !text ||
        !strstr(text, "END\n")) {
        const char *e = text ? strstr(text, "E\t") : NULL;
        if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == NOPI_PROBE_API_EXIT)
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "the NEURON_LIBRARY registration "
                      "called the neuronop kernel API (printf, a tensor factory, ...), which "
                      "has no device to run on while building");
        else if (timed_out)
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "the NEURON_LIBRARY registration "
                      "did not finish in %.0f s", REGISTRATION_SECONDS);
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "the NEURON_LIBRARY registration "
                      "made a system call a build does not allow (a process, a program, the "
                      "network or a file to write)");
        else if (WIFSIGNALED(status))
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "the NEURON_LIBRARY registration "
                      "crashed (%s)", strsignal(WTERMSIG(status)));
        else
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "cannot load the shape sources to "
                      "read their registration: %s", e ? e + 2 : "the probe failed");
        nopi_detail(err, "the registration function may only call m.def; shape functions "
                    "must not run at load time");
        free(text);
        return -1;
    }
    *out = text;
    return 0;
}

/* ---- reading the records ---------------------------------------------------------------- */

typedef struct regdef {
    char *op, *kernel, *shape_sym, *file;
    int line, nargs;
    int kinds[NT_REG_MAX_ARGS];
    bool byref[NT_REG_MAX_ARGS];
} regdef;

/* Splits a record at tabs in place; returns the number of fields. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    while (line && n < max) {
        f[n++] = line;
        char *tab = strchr(line, '\t');
        if (tab)
            *tab++ = '\0';
        line = tab;
    }
    return n;
}

/* The column of "op" (the quoted op name) on line `line` of file, so an error about a def
 * points at it; 0 when it cannot be found. */
static int column_of(const char *file, int line, const char *op)
{
    char text[1024], quoted[300];
    if (nopi_read_line(file, line, text, sizeof text) != 0)
        return 0;
    snprintf(quoted, sizeof quoted, "\"%s\"", op);
    const char *at = strstr(text, quoted);
    return at ? (int)(at - text) + 1 : 0;
}

static int def_error(builder *b, const regdef *d, const char *fmt, const char *a,
                     const char *c)
{
    return nopi_fail(b->err, NOP_ERR_COMPILE, d->file, d->line,
                     column_of(d->file, d->line, d->op), fmt, a, c);
}

static int parse_records(builder *b, char *text, regdef *defs, int *ndefs)
{
    *ndefs = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *f[8];
        int n = split(line, f, 8);
        if (n >= 4 && strcmp(f[0], "L") == 0 && !b->ns) {
            /* TORCH_LIBRARY(ns, m) makes it an identifier; a hand-made registrar call can
             * pass any bytes, which build's summary, inspect and Python would show */
            if (!nopi_is_identifier(f[1]))
                return nopi_fail(b->err, NOP_ERR_COMPILE, f[2], atoi(f[3]), 0, "the library's "
                                 "namespace '%s' is not an identifier", f[1]);
            if (strcmp(f[1], "builtin") == 0)   /* gpsimd.md: reserved, as a manifest name is */
                return nopi_fail(b->err, NOP_ERR_COMPILE, f[2], atoi(f[3]), 0, "library name "
                                 "'builtin' is reserved by the Neuron runtime; choose another "
                                 "name");
            if (!(b->ns = strdup(f[1])))
                return nopi_nomem(b->err);
        }
        if (n < 8 || strcmp(f[0], "D") != 0)
            continue;
        regdef d = { 0 };
        d.line = atoi(f[5]);
        d.nargs = atoi(f[6]);
        for (int i = 0; i < d.nargs && i < NT_REG_MAX_ARGS; i++) {
            d.kinds[i] = f[7][2 * i] - '0';
            d.byref[i] = f[7][2 * i + 1] == 'r';
        }
        regdef probe = { .op = f[1], .file = f[4], .line = d.line };
        if (!nopi_is_identifier(f[1]))
            return def_error(b, &probe, "op name '%s' is not an identifier%s", f[1], "");
        if (!nopi_is_identifier(f[2]))
            return def_error(b, &probe, "op '%s' names kernel '%s', which is not a function "
                             "name", f[1], f[2]);
        if (!f[3][0])
            return def_error(b, &probe, "the shape function of op '%s' is not visible to "
                             "the library%s; remove 'static' (or the anonymous namespace)",
                             f[1], "");
        for (int i = 0; i < *ndefs; i++)
            if (strcmp(defs[i].op, f[1]) == 0)
                return def_error(b, &probe, "op '%s' is registered twice (first at line %s)",
                                 f[1], f[5]);
        if (*ndefs == NOP_MAX_OPS)
            return def_error(b, &probe, "op '%s' is one more than the %s ops a library may "
                             "register", f[1], "10");
        d.op = strdup(f[1]);
        d.kernel = strdup(f[2]);
        d.shape_sym = strdup(f[3]);
        d.file = strdup(f[4]);
        defs[(*ndefs)++] = d;
        if (!d.op || !d.kernel || !d.shape_sym || !d.file)
            return nopi_nomem(b->err);
    }
    return 0;
}

static void free_defs(regdef *defs, int n)
{
    for (int i = 0; i < n; i++) {
        free(defs[i].op);
        free(defs[i].kernel);
        free(defs[i].shape_sym);
        free(defs[i].file);
    }
}

/* ---- ops from the registration, or checked against it ----------------------------------- */

static bool same_args(const nopi_op *op, const regdef *d)
{
    if (op->nargs != d->nargs)
        return false;
    for (int i = 0; i < d->nargs; i++)
        if ((int)op->args[i] != d->kinds[i])
            return false;
    return true;
}

static void args_text(const int *kinds, int n, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                 nopi_argtype_names[kinds[i]]);
    }
}

/* The manifest's ops must be the registration's: same names, kernels and args. */
static int compare_with_manifest(builder *b, const regdef *defs, int ndefs)
{
    nopi_op *ops = b->mcopy.ops;
    for (int i = 0; i < b->mcopy.nops; i++) {
        const regdef *d = NULL;
        for (int k = 0; k < ndefs && !d; k++)
            if (strcmp(defs[k].op, ops[i].name) == 0)
                d = &defs[k];
        char want[200], have[200];
        if (!d) {
            nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, ops[i].pos.line, ops[i].pos.col,
                      "op '%s' is not registered by NEURON_LIBRARY in shape_srcs", ops[i].name);
            nopi_detail(b->err, "add m.def(\"%s\", &%s, \"%s\"), or leave out 'ops:' and let "
                        "the registration give the ops", ops[i].name, ops[i].shape,
                        ops[i].kernel);
            return -1;
        }
        if (strcmp(d->kernel, ops[i].kernel) != 0)
            return nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, ops[i].kernel_pos.line,
                             ops[i].kernel_pos.col, "op '%s' has kernel '%s' here but '%s' in "
                             "its registration (%s:%d)", ops[i].name, ops[i].kernel, d->kernel,
                             d->file, d->line);
        nopi_cxxfn shape;
        nopi_cxx_read(d->shape_sym, &shape);
        if (strcmp(shape.name, ops[i].shape) != 0 && strcmp(shape.qual, ops[i].shape) != 0)
            return nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, ops[i].shape_pos.line,
                             ops[i].shape_pos.col, "op '%s' has shape function '%s' here but "
                             "'%s' in its registration (%s:%d)", ops[i].name, ops[i].shape,
                             shape.qual, d->file, d->line);
        if (!same_args(&ops[i], d)) {
            int kinds[NOP_MAX_ARGS];
            for (int k = 0; k < ops[i].nargs; k++)
                kinds[k] = (int)ops[i].args[k];
            args_text(kinds, ops[i].nargs, want, sizeof want);
            args_text(d->kinds, d->nargs, have, sizeof have);
            return nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, ops[i].pos.line,
                             ops[i].pos.col, "op '%s' declares args [%s] here, but its "
                             "registered shape function takes [%s] (%s:%d)", ops[i].name, want,
                             have, d->file, d->line);
        }
        b->fns[i][1].sym = strdup(d->shape_sym);
        memcpy(b->fns[i][1].byref, d->byref, sizeof d->byref);
        if (!b->fns[i][1].sym)
            return nopi_nomem(b->err);
    }
    for (int k = 0; k < ndefs; k++) {
        bool found = false;
        for (int i = 0; i < b->mcopy.nops && !found; i++)
            found = strcmp(defs[k].op, ops[i].name) == 0;
        if (!found)
            return nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, b->mcopy.ops_pos.line,
                             b->mcopy.ops_pos.col, "'ops' lacks op '%s', which NEURON_LIBRARY "
                             "registers (%s:%d); list it, or leave out 'ops:'", defs[k].op,
                             defs[k].file, defs[k].line);
    }
    return 0;
}

static int ops_from_registration(builder *b, const regdef *defs, int ndefs)
{
    for (int k = 0; k < ndefs; k++) {
        nopi_op *op = &b->mcopy.ops[k];
        nopi_cxxfn fn;
        nopi_cxx_read(defs[k].shape_sym, &fn);
        op->name = strdup(defs[k].op);
        op->kernel = strdup(defs[k].kernel);
        op->shape = strdup(fn.qual[0] ? fn.qual : defs[k].shape_sym);
        op->nargs = defs[k].nargs;
        for (int i = 0; i < op->nargs; i++)
            op->args[i] = (enum nop_argtype)defs[k].kinds[i];
        b->mcopy.nops = k + 1;
        b->reg_file[k] = strdup(defs[k].file);
        b->reg_line[k] = defs[k].line;
        b->fns[k][1].sym = strdup(defs[k].shape_sym);
        memcpy(b->fns[k][1].byref, defs[k].byref, sizeof defs[k].byref);
        if (!op->name || !op->kernel || !op->shape || !b->reg_file[k] || !b->fns[k][1].sym)
            return nopi_nomem(b->err);
    }
    return 0;
}

/* Tests of a manifest without ops name their op by name: resolve it now. */
static int resolve_tests(builder *b)
{
    nop_manifest *m = &b->mcopy;
    if (m->ntests == 0)
        return 0;
    if (!(b->tests = calloc((size_t)m->ntests, sizeof *b->tests)))
        return nopi_nomem(b->err);
    memcpy(b->tests, m->tests, (size_t)m->ntests * sizeof *b->tests);
    m->tests = b->tests;
    const char *names[NOP_MAX_OPS];
    for (int i = 0; i < m->nops; i++)
        names[i] = m->ops[i].name;
    for (int t = 0; t < m->ntests; t++) {
        nopi_test *test = &b->tests[t];
        if (test->op >= 0)
            continue;
        /* "my_ops::relu", as run names it, is relu of NEURON_LIBRARY(my_ops, m) (a new
         * user's find: refused, with no hint) */
        const char *name = test->opname;
        size_t nl = b->ns ? strlen(b->ns) : 0;
        if (nl && strncmp(name, b->ns, nl) == 0 && strncmp(name + nl, "::", 2) == 0)
            name += nl + 2;
        for (int i = 0; i < m->nops && test->op < 0; i++)
            if (strcmp(m->ops[i].name, name) == 0)
                test->op = i;
        if (test->op < 0) {
            /* another namespace's op ("my_ops::relu"): the closest of this one's */
            const char *colons = strstr(name, "::");
            const char *bare = colons ? colons + 2 : name;
            const char *hint = nop_closest(bare, names, (size_t)m->nops);
            if (!hint && colons)
                for (int i = 0; i < m->nops && !hint; i++)
                    if (strcmp(m->ops[i].name, bare) == 0)
                        hint = m->ops[i].name;
            nopi_fail(b->err, NOP_ERR_INPUT, m->path, test->op_pos.line, test->op_pos.col,
                      "test '%s' names op '%s', which NEURON_LIBRARY does not register%s%s%s%s%s",
                      test->name, test->opname, hint ? "; did you mean '" : "",
                      hint && colons && b->ns ? b->ns : "", hint && colons && b->ns ? "::" : "",
                      hint ? hint : "", hint ? "'?" : "");
            return -1;
        }
        if (test->nargs != m->ops[test->op].nargs)
            return nopi_fail(b->err, NOP_ERR_INPUT, m->path, test->pos.line, test->pos.col,
                             "test '%s' gives %d argument%s; op '%s' takes %d", test->name,
                             test->nargs, test->nargs == 1 ? "" : "s", test->opname,
                             m->ops[test->op].nargs);
    }
    return 0;
}

int nopi_build_registration(builder *b, const object *objs, int nobjs)
{
    bool registers = false, fn;
    for (int i = 0; i < nobjs && !registers; i++)
        registers = objs[i].role == NOPI_ROLE_SHAPE && objs[i].lang == NOPI_LANG_CXX &&
                    nopi_object_defines(&objs[i], NT_REG_SYMBOL, &fn);
    if (!registers) {
        if (!b->reg_ops)
            return 0;
        nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, 1, 1, "the manifest has no 'ops' and "
                  "no shape source registers any with NEURON_LIBRARY");
        for (int i = 0; i < nobjs; i++)
            if (objs[i].role != NOPI_ROLE_SHAPE &&
                nopi_object_defines(&objs[i], NT_REG_SYMBOL, &fn))
                nopi_detail(b->err, "'%s' has the NEURON_LIBRARY: the registration runs on "
                            "the host, so move it to a shape source", objs[i].source);
        return -1;
    }
    char *probe = nopi_path_join(b->tmpdir, "probe.so");
    char *text = NULL;
    regdef defs[NOP_MAX_OPS];
    int ndefs = 0;
    /* the probe loads the shape objects: none may run code as it does (said at its source
     * line, before the probe's own check on what the linker made) */
    int rc = probe ? nopi_check_load_time_code(b, objs, nobjs) : nopi_nomem(b->err);
    if (rc == 0)
        rc = nopi_build_link_probe(b, objs, nobjs, probe);
    if (rc == 0)
        rc = run_registration(probe, &text, b->err);
    if (rc == 0)
        rc = parse_records(b, text, defs, &ndefs);
    if (rc == 0 && ndefs == 0)
        rc = nopi_fail(b->err, NOP_ERR_INPUT, b->mcopy.path, 1, 1, "NEURON_LIBRARY registers "
                       "no ops; add m.def(\"op\", &shape_fn, \"kernel_fn\") to it");
    if (rc == 0)
        rc = b->reg_ops ? ops_from_registration(b, defs, ndefs)
                        : compare_with_manifest(b, defs, ndefs);
    if (rc == 0 && b->reg_ops)
        rc = resolve_tests(b);
    free_defs(defs, ndefs);
    free(text);
    free(probe);
    return rc;
}

void nopi_build_registration_free(builder *b)
{
    for (int i = 0; i < NOP_MAX_OPS; i++) {
        free(b->fns[i][0].sym);
        free(b->fns[i][1].sym);
        free(b->reg_file[i]);
        if (b->reg_ops && i < b->mcopy.nops) {
            free(b->mcopy.ops[i].name);
            free(b->mcopy.ops[i].kernel);
            free(b->mcopy.ops[i].shape);
        }
    }
    for (int t = 0; b->refs && t < b->mcopy.ntests; t++)
        free(b->refs[t].sym);
    free(b->refs);
    free(b->tests);
    free(b->ns);
}
