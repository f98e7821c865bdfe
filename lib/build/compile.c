/*
 * compile.c - the libtcc boundary (see compile.h).
 *
 * A state records what it is asked (options, texts, objects) and replays it on a fresh
 * TCCState when the output is wanted: for a file, in a forked child under the build's limits
 * and Landlock (confine.h), so neither a compile bomb nor libtcc's exit(1) nor its global
 * state can reach neuronop; in memory (NOPI_CC_MEMORY, neuronop's own host-speed loop), in
 * this process.  The child sends each libtcc message up a pipe and ends with the step that
 * failed; the parent turns them into diagnostics exactly as an in-process compile would.
 */
#include <errno.h>
#include <fcntl.h>
#include <libtcc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "confine.h"

typedef enum opkind { OP_DEFINE, OP_UNDEF, OP_INCLUDE, OP_OPTION, OP_COMPILE, OP_ADD,
                      OP_OUTPUT } opkind;
typedef struct ccop {
    opkind kind;
    char *a, *b;
} ccop;

/* The child's exit status when libtcc ran out of memory (its message says "memory full"). */
#define EXIT_MEMORY 86

struct nopi_cc {
    nopi_cc_kind kind;
    char *tcc_dir;
    const nopi_confine *confine;   /* NULL: compile in this process */
    char name[256];                /* what is compiled, for a limit's message */
    ccop *ops;
    int nops, cap;
    bool nomem;
    nop_diag_fn *diag;
    void *ctx;
    TCCState *s;           /* NOPI_CC_MEMORY: the replayed state, kept for its symbols */
    int pipe;              /* in the child: where messages go; -1 in the parent */
    bool quiet;            /* in the child's preprocessing pass: messages are not sent */
    nop_error *err;        /* where the current call records its first error */
    bool failed;           /* an error was recorded during the current call */
    bool source_error;     /* the last failure was an error in the compiled text */
};

/*
 * Turns one libtcc message into a diagnostic.  Forms (platform-notes.md):
 *   "file.c:3: warning: msg", "file.c:1: error: msg", "tcc: error: msg",
 *   "In file included from a.c:1:\nb.h:1: error: msg"  (context lines first).
 */
static void parse_message(const char *msg, nop_diag *d)
{
    memset(d, 0, sizeof *d);
    d->severity = NOP_SEV_ERROR;
    const char *last = strrchr(msg, '\n');
    if (last) {   /* keep the inclusion context as detail lines */
        size_t n = (size_t)(last - msg);
        if (n >= sizeof d->detail)
            n = sizeof d->detail - 1;
        memcpy(d->detail, msg, n);
        d->detail[n] = '\0';
        msg = last + 1;
    }
    const char *body = msg;
    const char *sev = strstr(msg, ": error: ");
    const char *wsev = strstr(msg, ": warning: ");
    if (wsev && (!sev || wsev < sev)) {
        sev = wsev;
        d->severity = NOP_SEV_WARNING;
    }
    if (sev) {
        body = sev + (d->severity == NOP_SEV_WARNING ? 11 : 9);
        /* the location is "file:line" before the severity, or "tcc" */
        const char *colon = NULL;
        for (const char *p = sev - 1; p > msg; p--)
            if (*p == ':') {
                colon = p;
                break;
            }
        if (colon && strncmp(msg, "tcc:", 4) != 0) {
            int line = atoi(colon + 1);
            if (line > 0) {
                size_t n = (size_t)(colon - msg);
                if (n >= sizeof d->file)
                    n = sizeof d->file - 1;
                memcpy(d->file, msg, n);
                d->file[n] = '\0';
                d->line = line;
            }
        }
    }
    nopi_strlcpy(d->msg, body, sizeof d->msg);
}

/* One libtcc message in the parent (or in this process): warnings to the caller's sink, the
 * first error into the current call's nop_error.  A message about a file the build may not
 * read is replaced, never quoted (confine.h). */
static void deliver(nopi_cc *cc, const char *msg)
{
    nop_diag d;
    parse_message(msg, &d);
    if (!cc->confine || !nopi_confine_diag(cc->confine, &d))
        nopi_diag_add_excerpt(&d);
    if (d.severity == NOP_SEV_ERROR) {
        if (!cc->failed && cc->err) {
            cc->err->kind = NOP_ERR_COMPILE;
            cc->err->diag = d;
        }
        cc->failed = true;
    } else if (cc->diag) {
        cc->diag(cc->ctx, &d);
    }
}

/* ---- the pipe between the child and the parent: records of a kind byte, a length, text -- */

static void send_record(int fd, char kind, const char *text)
{
    uint32_t len = (uint32_t)strlen(text);
    char head[5] = { kind };
    memcpy(head + 1, &len, 4);
    if (write(fd, head, 5) != 5 || write(fd, text, len) != (ssize_t)len)
        _exit(EXIT_FAILURE);
}

static void on_message(void *opaque, const char *msg)
{
    nopi_cc *cc = opaque;
    if (cc->pipe < 0) {
        deliver(cc, msg);
        return;
    }
    if (!cc->quiet)
        send_record(cc->pipe, 'M', msg);
    /* libtcc exits after this one (or unwinds into a half-freed state): end here, without
     * the atexit handlers and stdio buffers a forked neuronop shares with its parent */
    if (strstr(msg, "memory full"))
        _exit(EXIT_MEMORY);
    cc->failed = strstr(msg, ": error: ") != NULL || cc->failed;
}

/* ---- recording -------------------------------------------------------------------------- */

static void record(nopi_cc *cc, opkind kind, const char *a, const char *b)
{
    if (cc->nomem)
        return;
    if (cc->nops == cc->cap) {
        int cap = cc->cap ? cc->cap * 2 : 16;
        ccop *ops = realloc(cc->ops, (size_t)cap * sizeof *ops);
        if (!ops) {
            cc->nomem = true;
            return;
        }
        cc->ops = ops;
        cc->cap = cap;
    }
    ccop *op = &cc->ops[cc->nops];
    op->kind = kind;
    op->a = a ? strdup(a) : NULL;
    op->b = b ? strdup(b) : NULL;
    if ((a && !op->a) || (b && !op->b)) {
        free(op->a);
        free(op->b);
        cc->nomem = true;
        return;
    }
    cc->nops++;
}

nopi_cc *nopi_cc_new(nopi_cc_kind kind, const char *tcc_dir, const nopi_confine *confine,
                     nop_diag_fn *diag, void *ctx)
{
    nopi_cc *cc = calloc(1, sizeof *cc);
    if (!cc || (tcc_dir && !(cc->tcc_dir = strdup(tcc_dir)))) {
        free(cc);
        return NULL;
    }
    cc->kind = kind;
    cc->confine = kind == NOPI_CC_MEMORY ? NULL : confine;
    cc->diag = diag;
    cc->ctx = ctx;
    cc->pipe = -1;
    nopi_strlcpy(cc->name, "a source", sizeof cc->name);
    return cc;
}

void nopi_cc_name(nopi_cc *cc, const char *name)
{
    nopi_strlcpy(cc->name, name, sizeof cc->name);
}

void nopi_cc_free(nopi_cc *cc)
{
    if (!cc)
        return;
    if (cc->s)
        tcc_delete(cc->s);
    for (int i = 0; i < cc->nops; i++) {
        free(cc->ops[i].a);
        free(cc->ops[i].b);
    }
    free(cc->ops);
    free(cc->tcc_dir);
    free(cc);
}

void nopi_cc_define(nopi_cc *cc, const char *name, const char *value)
{
    record(cc, OP_DEFINE, name, value);
}

void nopi_cc_undefine(nopi_cc *cc, const char *name)
{
    record(cc, OP_UNDEF, name, NULL);
}

void nopi_cc_include_dir(nopi_cc *cc, const char *dir)
{
    record(cc, OP_INCLUDE, dir, NULL);
}

void nopi_cc_option(nopi_cc *cc, const char *option)
{
    record(cc, OP_OPTION, option, NULL);
}

bool nopi_cc_source_error(const nopi_cc *cc)
{
    return cc->source_error;
}

/* ---- replaying on a TCCState ------------------------------------------------------------ */

/*
 * Applies the recorded steps to a new state, stopping at the first that fails.  libtcc reads
 * options such as -g and -nostdlib when the output type is set (it creates the debug sections
 * then, and adds the C runtime's start files), and an option set after that crashes it (-g)
 * or is ignored: so the type is set once every option is in, just before the first compile.
 * Returns the index of the failing step, or -1 when all went well; *s gets the state.
 */
static int replay(nopi_cc *cc, TCCState **out)
{
    TCCState *s = tcc_new();
    *out = s;
    if (!s)
        return 0;
    tcc_set_error_func(s, cc, on_message);
    if (cc->tcc_dir)
        tcc_set_lib_path(s, cc->tcc_dir);
    bool started = false;
    for (int i = 0; i < cc->nops; i++) {
        const ccop *op = &cc->ops[i];
        int rc = 0;
        if (op->kind >= OP_COMPILE && !started) {
            tcc_set_output_type(s, cc->kind == NOPI_CC_OBJECT ? TCC_OUTPUT_OBJ
                                   : cc->kind == NOPI_CC_SHARED ? TCC_OUTPUT_DLL
                                                                : TCC_OUTPUT_MEMORY);
            started = true;
        }
        switch (op->kind) {
        case OP_DEFINE: tcc_define_symbol(s, op->a, op->b); break;
        case OP_UNDEF: tcc_undefine_symbol(s, op->a); break;
        case OP_INCLUDE: tcc_add_include_path(s, op->a); break;
        case OP_OPTION:
            if (!started)
                tcc_set_options(s, op->a);
            break;
        case OP_COMPILE: rc = tcc_compile_string(s, op->a); break;
        case OP_ADD: rc = tcc_add_file(s, op->a); break;
        case OP_OUTPUT: rc = tcc_output_file(s, op->a); break;
        }
        if (rc < 0 || cc->failed)
            return i;
    }
    return -1;
}

static const char *const step_names[] = {
    [OP_COMPILE] = "compiling", [OP_ADD] = "loading an object file", [OP_OUTPUT] = "linking",
};

/* The end of a run: a failure without a message still gets one. */
static int finish(nopi_cc *cc, int step, nop_error *err)
{
    bool failed = cc->failed || step >= 0;
    if (failed && !cc->failed) {
        opkind k = step >= 0 && step < cc->nops ? cc->ops[step].kind : OP_COMPILE;
        nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "%s failed",
                  step_names[k >= OP_COMPILE ? k : OP_COMPILE]);
    }
    cc->source_error = failed && cc->failed && step >= 0 && step < cc->nops &&
                       cc->ops[step].kind == OP_COMPILE;
    cc->err = NULL;
    cc->failed = false;
    return failed ? -1 : 0;
}

/* ---- the child -------------------------------------------------------------------------- */

typedef struct inbox {
    char *data;
    size_t len, cap;
    bool full;
} inbox;

/* What the child sends, kept up to 4 MiB: a flood of warnings is cut, never a reason for
 * neuronop to grow. */
static void take(void *ctx, const char *data, size_t len)
{
    inbox *in = ctx;
    if (in->full || in->len + len > (4u << 20)) {
        in->full = true;
        return;
    }
    if (in->len + len + 1 > in->cap) {
        size_t cap = (in->len + len + 1) * 2;
        char *p = realloc(in->data, cap);
        if (!p) {
            in->full = true;
            return;
        }
        in->data = p;
        in->cap = cap;
    }
    memcpy(in->data + in->len, data, len);
    in->len += len;
}

/*
 * Without Landlock, the child checks what it would read before it compiles: libtcc
 * preprocesses each text into a file, and every file its line markers enter ("# 1 "f.h" 1")
 * must be one the build may read.  The first that is not becomes the message libtcc gives
 * when Landlock refuses it, "include file 'F' not found" at the including line, which the
 * parent rewords (confine.h).  Returns the index of the refused step, or -1.
 */
static int check_reads(nopi_cc *cc, FILE *pp, int step)
{
    char line[4200], includer[2048] = "", bad[2048] = "";
    int at = 1, depth = 0;
    while (fgets(line, sizeof line, pp)) {
        char name[2048];
        int n, flag = 0;
        if (line[0] != '#' || sscanf(line, "# %d \"%2047[^\"]\" %d", &n, name, &flag) < 2)
            continue;
        if (!bad[0] && flag == 1 && name[0] != '<' &&
            !nopi_confine_allows(cc->confine, name)) {
            char *r = realpath(name, NULL);
            nopi_strlcpy(bad, r ? r : name, sizeof bad);
            free(r);
            depth = 1;
        } else if (bad[0]) {
            /* the marker that returns from it names the including file (a #line'd name,
             * which libtcc marks only then) and the line after the #include */
            depth += flag == 1 ? 1 : flag == 2 ? -1 : 0;
            if (depth == 0) {
                nopi_strlcpy(includer, name, sizeof includer);
                at = n > 1 ? n - 1 : 1;
                break;
            }
        }
    }
    if (!bad[0])
        return -1;
    char msg[4200];
    snprintf(msg, sizeof msg, "%s:%d: error: include file '%s' not found",
             includer[0] ? includer : "tcc", at, bad);
    send_record(cc->pipe, 'M', msg);
    return step;
}

static int prescan(nopi_cc *cc)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/.prescan-XXXXXX", cc->confine->write);
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    int refused = -1, saved = dup(1);
    TCCState *s = tcc_new();
    if (!s || saved < 0 || dup2(fd, 1) < 0)
        goto out;
    cc->quiet = true;   /* its errors are the compile's to report, once */
    tcc_set_error_func(s, cc, on_message);
    if (cc->tcc_dir)
        tcc_set_lib_path(s, cc->tcc_dir);
    bool started = false;
    for (int i = 0; i < cc->nops && refused < 0; i++) {
        const ccop *op = &cc->ops[i];
        switch (op->kind) {
        case OP_DEFINE: tcc_define_symbol(s, op->a, op->b); break;
        case OP_UNDEF: tcc_undefine_symbol(s, op->a); break;
        case OP_INCLUDE: tcc_add_include_path(s, op->a); break;
        case OP_OPTION:
            if (!started)
                tcc_set_options(s, op->a);
            break;
        case OP_COMPILE: {
            if (!started)
                tcc_set_output_type(s, TCC_OUTPUT_PREPROCESS);
            started = true;
            fflush(stdout);
            off_t from = lseek(fd, 0, SEEK_END);
            tcc_compile_string(s, op->a);
            fflush(stdout);
            FILE *pp = fdopen(dup(fd), "r");
            if (pp && fseeko(pp, from, SEEK_SET) == 0)
                refused = check_reads(cc, pp, i);
            if (pp)
                fclose(pp);
            break;
        }
        default: break;
        }
    }
out:
    if (saved >= 0) {
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
    }
    if (s)
        tcc_delete(s);
    close(fd);
    cc->quiet = false;
    cc->failed = false;
    return refused;
}

static _Noreturn void child(nopi_cc *cc, int fd)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {   /* nothing libtcc or an exit() flush writes reaches neuronop's output */
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    signal(SIGPIPE, SIG_DFL);
    cc->pipe = fd;
    if (nopi_confine_child(cc->confine, false, nopi_confine_address_space()) != 0)
        _exit(EXIT_FAILURE);
    TCCState *s;
    int step = -1;
    if (cc->confine->write && !nopi_confine_landlock())
        step = prescan(cc);
    if (step < 0)
        step = replay(cc, &s);
    char end[16];
    snprintf(end, sizeof end, "%d", step);
    send_record(fd, 'E', end);
    _exit(0);
}

/* Reads the child's records: messages delivered in order; the step of the end record, or
 * -2 when there was none (the child did not finish). */
static int read_records(nopi_cc *cc, const inbox *in, bool *memory)
{
    int step = -2;
    size_t at = 0;
    while (at + 5 <= in->len) {
        char kind = in->data[at];
        uint32_t len;
        memcpy(&len, in->data + at + 1, 4);
        if (at + 5 + len > in->len)
            break;
        char *text = strndup(in->data + at + 5, len);
        if (text && kind == 'M') {
            *memory = *memory || strstr(text, "memory full") != NULL;
            if (!strstr(text, "memory full"))
                deliver(cc, text);
        } else if (text && kind == 'E') {
            step = atoi(text);
        }
        free(text);
        at += 5 + len;
    }
    return step;
}

static int run_child(nopi_cc *cc, nop_error *err)
{
    const nopi_confine *c = cc->confine;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot start the compiler: %s",
                         strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot start the compiler: %s",
                         strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child(cc, fds[1]);
    }
    close(fds[1]);
    inbox in = { 0 };
    int status = 0;
    double cpu = 0;
    int waited = nopi_confine_wait(pid, c->cpu_seconds, fds[0], take, &in, &status, &cpu);
    close(fds[0]);
    bool memory = (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_MEMORY) ||
                  (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ);
    cc->err = err;
    int step = read_records(cc, &in, &memory);
    free(in.data);
    /* An allocator that gives up by itself (AddressSanitizer's, in a sanitized neuronop)
     * exits without a word from libtcc and before the end record: libtcc's own exits are
     * for bad options, which never reach it, and full memory, which it says. */
    memory = memory || (step == -2 && !cc->failed && WIFEXITED(status) &&
                        WEXITSTATUS(status) != 0);
    bool time = waited == 1 || (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU ||
                (WTERMSIG(status) == SIGKILL && c->cpu_seconds && cpu >= c->cpu_seconds)));
    if (waited < 0 || time || memory || step == -2) {
        cc->failed = false;
        cc->err = NULL;
        cc->source_error = false;
        if (time || memory)
            nopi_confine_past(c, err, cc->name, time);
        else if (WIFSIGNALED(status))
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "compiling '%s' failed: libtcc "
                      "ended with signal %d", cc->name, WTERMSIG(status));
        else
            nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "compiling '%s' failed: libtcc "
                      "exited with %d", cc->name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return finish(cc, step, err);
}

/* ---- the steps -------------------------------------------------------------------------- */

int nopi_cc_compile(nopi_cc *cc, const char *text, nop_error *err)
{
    record(cc, OP_COMPILE, text, NULL);
    return cc->nomem ? nopi_nomem(err) : 0;
}

int nopi_cc_add_object(nopi_cc *cc, const char *path, nop_error *err)
{
    record(cc, OP_ADD, path, NULL);
    return cc->nomem ? nopi_nomem(err) : 0;
}

int nopi_cc_output(nopi_cc *cc, const char *path, nop_error *err)
{
    record(cc, OP_OUTPUT, path, NULL);
    if (cc->nomem)
        return nopi_nomem(err);
    if (cc->confine)
        return run_child(cc, err);
    cc->err = err;
    TCCState *s;
    int step = replay(cc, &s);
    if (!s)
        return nopi_nomem(err);
    tcc_delete(s);
    return finish(cc, step, err);
}

int nopi_cc_relocate(nopi_cc *cc, nop_error *err)
{
    if (cc->nomem)
        return nopi_nomem(err);
    cc->err = err;
    int step = replay(cc, &cc->s);
    if (!cc->s)
        return nopi_nomem(err);
    if (step < 0 && tcc_relocate(cc->s, TCC_RELOCATE_AUTO) < 0 && !cc->failed)
        step = cc->nops;
    return finish(cc, step, err);
}

void *nopi_cc_symbol(nopi_cc *cc, const char *name)
{
    return cc->s ? tcc_get_symbol(cc->s, name) : NULL;
}

/* ---- locating tcc's runtime ------------------------------------------------------------- */

int nop_find_tcc_dir(char *buf, size_t size, nop_error *err)
{
    const char *env = getenv("NEURONOP_TCC_DIR");
    const char *candidates[] = {
        env,
#ifdef NOP_TCC_DIR
        NOP_TCC_DIR,   /* where the Makefile found it on the build machine */
#endif
        "/usr/lib/x86_64-linux-gnu/tcc", "/usr/lib/tcc", "/usr/local/lib/tcc",
    };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(candidates); i++) {
        if (!candidates[i] || !candidates[i][0])
            continue;
        char probe[1100];
        snprintf(probe, sizeof probe, "%s/libtcc1.a", candidates[i]);
        if (access(probe, R_OK) == 0) {
            nopi_strlcpy(buf, candidates[i], size);
            return 0;
        }
        if (i == 0) {   /* an explicit setting that does not work is an error, not a hint */
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "NEURONOP_TCC_DIR is '%s', which has "
                      "no libtcc1.a", env);
            nopi_detail(err, "point it at tcc's library folder, or unset it");
            return -1;
        }
    }
    nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot find tcc's runtime library "
              "(libtcc1.a)");
    nopi_detail(err, "install it with 'apt-get install tcc', or set NEURONOP_TCC_DIR to the "
                "folder that holds it");
    return -1;
}
