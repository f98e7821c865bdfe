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
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libtcc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "confine.h"
#include "gen.h"

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
    nopi_confine *confine;         /* NULL: compile in this process */
    char name[256];                /* what is compiled, for a limit's message */
    ccop *ops;
    int nops, cap;
    bool nomem;
    nop_diag_fn *diag;
    void *ctx;
    TCCState *s;           /* NOPI_CC_MEMORY: the replayed state, kept for its symbols */
    int pipe;              /* in the child: where messages go; -1 in the parent */
    bool quiet;            /* in the child's preprocessing pass: messages are not sent */
    bool no_warnings;      /* -w: warnings are dropped here, not by libtcc (below) */
    nop_error *err;        /* where the current call records its first error */
    bool failed;           /* an error was recorded during the current call */
    bool source_error;     /* the last failure was an error in the compiled text */
};

/*
 * Turns one libtcc message into a diagnostic.  Forms (platform-notes.md):
 *   "file.c:3: warning: msg", "file.c:1: error: msg", "tcc: error: msg",
 *   "In file included from a.c:1:\nb.h:1: error: msg"  (context lines first).
 */
static void parse_message(const char *text, nop_diag *d)
{
    memset(d, 0, sizeof *d);
    d->severity = NOP_SEV_ERROR;
    /* A warning ends with a newline, which would leave an empty last line (an "error" of no
     * words, after which the real error went unsaid): messages are taken without it. */
    char whole[sizeof d->file + sizeof d->msg + sizeof d->detail];
    nopi_strlcpy(whole, text, sizeof whole);
    for (size_t n = strlen(whole); n && whole[n - 1] == '\n'; n--)
        whole[n - 1] = '\0';
    const char *msg = whole;
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

/* libtcc says "';' expected (got \"for\")" at the token it met, with no column: where a
 * statement's ';' is missing, that is the next line's first token, a line after the mistake.
 * As gcc does, the message moves to the end of the line before (the last one with text, not
 * a directive) unless that one ends a statement or opens a block; otherwise it gets the
 * token's column (a type libtcc lacks, as __int128_t, is met so). */
/* The code of a line read going up from an error, its comments made blanks (so that columns
 * stay), strings and characters kept (a "//" in one is no comment: a reviewer's find); its
 * length without trailing blanks.  *in_comment says, on entry, that the line below began
 * inside a block comment, which then ends this line; on return, whether this one began
 * inside one (a "*" "/" before any opener), whose lines above are comment to its opener. */
static size_t code_of_line(char *text, bool *in_comment)
{
    size_t len = strlen(text);
    if (*in_comment) {   /* the comment's opener is this line's last, or it is all comment */
        char *open = NULL;
        for (char *p = strstr(text, "/*"); p; p = strstr(p + 1, "/*"))
            open = p;
        if (!open) {   /* (the comment goes on above: a reviewer's find) */
            text[0] = '\0';
            return 0;
        }
        len = (size_t)(open - text);
        text[len] = '\0';
    }
    *in_comment = false;
    enum { CODE, STRING, CHAR, BLOCK } at = CODE;
    for (size_t i = 0; i < len; i++) {
        char c = text[i], next = text[i + 1];
        if (at == STRING || at == CHAR) {
            if (c == '\\' && next)
                i++;
            else if (c == (at == STRING ? '"' : '\''))
                at = CODE;
        } else if (at == BLOCK) {
            text[i] = ' ';
            if (c == '*' && next == '/') {
                text[++i] = ' ';
                at = CODE;
            }
        } else if (c == '"' || c == '\'') {
            at = c == '"' ? STRING : CHAR;
        } else if (c == '/' && next == '/') {
            len = i;
        } else if (c == '/' && next == '*') {
            text[i] = text[i + 1] = ' ';
            i++;
            at = BLOCK;
        } else if (c == '*' && next == '/') {   /* the end of one opened above */
            memset(text, ' ', i + 2);
            i++;
            *in_comment = true;
        }
    }
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\r'))
        len--;
    text[len] = '\0';
    return len;
}

static void place_expected(nop_diag *d)
{
    char want[32], got[64], text[512];
    if (d->line <= 0 || sscanf(d->msg, "'%31[^']' expected (got \"%63[^\"]\")", want, got) != 2 ||
        nopi_read_line(d->file, d->line, text, sizeof text) != 0)
        return;
    size_t lead = strspn(text, " \t");
    if (strncmp(text + lead, got, strlen(got)) != 0) {   /* mid-line: at the token */
        const char *at = strstr(text, got);
        if (at)
            d->col = (int)(at - text) + 1;
        return;
    }
    char before[512];
    bool in_comment = false;   /* the line below began inside a block comment */
    for (int line = d->line - 1; line > 0 && line >= d->line - 20; line--) {
        if (nopi_read_line(d->file, line, before, sizeof before) != 0)
            return;
        size_t n = code_of_line(before, &in_comment);
        size_t first = strspn(before, " \t");
        if (first == n || before[first] == '#')
            continue;   /* a blank line (or a comment's), or a directive's */
        /* a statement or a block's start before: the token itself is what libtcc did not
         * take; not after a '}', which may end an initializer or a struct that lacks its ';'
         * (a reviewer's find) */
        if (strchr(";{", before[n - 1])) {
            d->col = (int)lead + 1;
            return;
        }
        int next = d->line;
        d->line = line;
        d->col = (int)n + 1;
        snprintf(d->msg, sizeof d->msg, "'%s' expected at the end of this line (line %d "
                 "starts with '%s')", want, next, got);
        return;
    }
}

/* C11 has no implicit declarations: libtcc warns of one and goes on, taking the function to
 * return an int, so a kernel calling tanhf without <math.h> computed garbage and said "ok" (a
 * new user's find; gcc 14 refuses them too).  Such a warning about a function the device has
 * is an error here, which names its header; of any other name (a misspelt one, assert
 * without <assert.h>, malloc) the device-symbol check says more after the compile. */
static void implicit_is_error(nop_diag *d)
{
    static const char pre[] = "implicit declaration of function '";
    char name[128];
    const char *header;
    if (strncmp(d->msg, pre, sizeof pre - 1) != 0 ||   /* (an error under -Werror) */
        sscanf(d->msg + sizeof pre - 1, "%127[^']", name) != 1 ||
        !(header = nopi_device_symbol_header(name)))
        return;
    d->severity = NOP_SEV_ERROR;
    snprintf(d->msg, sizeof d->msg, "'%s' is called but not declared: include %s, or declare "
             "a function of your own of that name before its call (C has no implicit "
             "declarations; the call would take its result for an int)", name, header);
    char text[512];   /* at the call, as the symbol check places its messages: the name */
    size_t n = strlen(name);   /* as a whole identifier, followed by its '(' */
    if (d->line <= 0 || nopi_read_line(d->file, d->line, text, sizeof text) != 0)
        return;
    for (const char *at = strstr(text, name); at; at = strstr(at + 1, name)) {
        const char *after = at + n;
        while (*after == ' ' || *after == '\t')
            after++;
        bool starts = at == text || !(isalnum((unsigned char)at[-1]) || at[-1] == '_');
        if (starts && *after == '(') {
            d->col = (int)(at - text) + 1;
            return;
        }
    }
}

/* One libtcc message in the parent (or in this process): warnings to the caller's sink, the
 * first error into the current call's nop_error.  A message about a file the build may not
 * read is replaced, never quoted (confine.h). */
static void deliver(nopi_cc *cc, const char *msg)
{
    nop_diag d;
    parse_message(msg, &d);
    implicit_is_error(&d);
    if (d.severity == NOP_SEV_WARNING && cc->no_warnings)
        return;
    if (!cc->confine || !nopi_confine_diag(cc->confine, &d)) {
        place_expected(&d);
        nopi_diag_add_excerpt(&d);
    }
    nopi_diag_clean(&d);   /* after the checks above, which need the file's own name */
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
    /* one write: written in two, the parent woke for the head alone, then again */
    struct iovec iov[2] = { { head, 5 }, { (void *)text, len } };
    if (writev(fd, iov, 2) != (ssize_t)(5 + len))
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

nopi_cc *nopi_cc_new(nopi_cc_kind kind, const char *tcc_dir, nopi_confine *confine,
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
    /* libtcc must still warn of an implicit declaration, which is an error here: -w is
     * done by dropping warnings as they come (and the warning is turned on again after the
     * user's options: new_state), as -w and -Wno-all brought the silently wrong answer back
     * (a reviewer's find) */
    if (strcmp(option, "-w") == 0)
        cc->no_warnings = true;
    else
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
static TCCState *new_state(nopi_cc *cc)
{
    TCCState *s = tcc_new();
    if (s) {
        tcc_set_error_func(s, cc, on_message);
        if (cc->tcc_dir)
            tcc_set_lib_path(s, cc->tcc_dir);
    }
    return s;
}

/* Applies a setting (define, undef, include folder, option); false for the other steps. */
static bool apply_setting(TCCState *s, const ccop *op, bool started)
{
    switch (op->kind) {
    case OP_DEFINE: tcc_define_symbol(s, op->a, op->b); return true;
    case OP_UNDEF: tcc_undefine_symbol(s, op->a); return true;
    case OP_INCLUDE: tcc_add_include_path(s, op->a); return true;
    case OP_OPTION:
        if (!started)
            tcc_set_options(s, op->a);
        return true;
    default: return false;
    }
}

static int replay(nopi_cc *cc, TCCState **out)
{
    TCCState *s = new_state(cc);
    *out = s;
    if (!s)
        return 0;
    bool started = false;
    for (int i = 0; i < cc->nops; i++) {
        const ccop *op = &cc->ops[i];
        int rc = 0;
        if (op->kind >= OP_COMPILE && !started) {
            /* after every option, which may have turned it off (nopi_cc_option) */
            tcc_set_options(s, "-Wimplicit-function-declaration");
            tcc_set_output_type(s, cc->kind == NOPI_CC_OBJECT ? TCC_OUTPUT_OBJ
                                   : cc->kind == NOPI_CC_SHARED ? TCC_OUTPUT_DLL
                                                                : TCC_OUTPUT_MEMORY);
            started = true;
        }
        if (apply_setting(s, op, started))
            continue;
        switch (op->kind) {
        case OP_COMPILE: rc = tcc_compile_string(s, op->a); break;
        case OP_ADD: rc = tcc_add_file(s, op->a); break;
        case OP_OUTPUT: rc = tcc_output_file(s, op->a); break;
        default: break;
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
    cc->quiet = true;   /* its errors are the compile's to report, once */
    TCCState *s = new_state(cc);
    if (!s || saved < 0 || dup2(fd, 1) < 0)
        goto out;
    bool started = false;
    for (int i = 0; i < cc->nops && refused < 0; i++) {
        const ccop *op = &cc->ops[i];
        if (apply_setting(s, op, started))
            continue;
        switch (op->kind) {
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

/* ---- the compile server: one child per build, one request per compile ---------------- */

/*
 * Forking costs more than it seems (copy-on-write faults and TLB flushes on both sides, and
 * on a busy machine the wait for the child to be scheduled), so a build forks one child at
 * its first libtcc compile and sends it every compile as a request: the steps, serialised.
 * The child confines itself once (Landlock, the memory limit), gives each request the CPU
 * limit afresh, answers with the records above, and exits at the end of its socket.  A
 * limit or a crash ends it; the next compile, if any, starts another.
 */
struct nopi_ccserver {
    pid_t pid;
    int sock;
};

static bool put_bytes(nopi_strbuf *sb, const char *p, bool present)
{
    uint32_t len = present ? (uint32_t)strlen(p) : UINT32_MAX;
    char b[4];
    memcpy(b, &len, 4);
    for (int i = 0; i < 4; i++)
        nopi_sb_printf(sb, "%c", b[i]);
    if (present)
        nopi_sb_puts(sb, p);
    return true;
}

/* kind, tcc_dir, then each step as kind, a, b; 'x' ends the request.  Strings are a 32-bit
 * length (UINT32_MAX: NULL) and the bytes. */
static char *request(const nopi_cc *cc, size_t *len)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_printf(&sb, "%c", 'a' + (int)cc->kind);
    put_bytes(&sb, cc->tcc_dir ? cc->tcc_dir : "", cc->tcc_dir != NULL);
    for (int i = 0; i < cc->nops; i++) {
        nopi_sb_printf(&sb, "%c", 'a' + (int)cc->ops[i].kind);
        put_bytes(&sb, cc->ops[i].a ? cc->ops[i].a : "", cc->ops[i].a != NULL);
        put_bytes(&sb, cc->ops[i].b ? cc->ops[i].b : "", cc->ops[i].b != NULL);
    }
    nopi_sb_puts(&sb, "x");
    *len = sb.len;
    return nopi_sb_take(&sb);
}

/* The child's end of its socket, read a request at a time: the parent sends a request
 * whole, so one read takes it all (a read for each field cost the child two dozen system
 * calls a compile, each through its seccomp filter).  Bytes past the request wait here for
 * the next one. */
typedef struct reader {
    int fd;
    size_t pos, len;
    char buf[16384];
} reader;

static bool read_full(reader *r, void *out, size_t n)
{
    for (char *p = out; n > 0;) {
        if (r->pos == r->len) {
            ssize_t got = read(r->fd, r->buf, sizeof r->buf);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                return false;
            r->pos = 0;
            r->len = (size_t)got;
        }
        size_t k = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(p, r->buf + r->pos, k);
        r->pos += k;
        p += k;
        n -= k;
    }
    return true;
}

static bool get_bytes(reader *r, char **out)
{
    uint32_t len;
    *out = NULL;
    if (!read_full(r, &len, 4))
        return false;
    if (len == UINT32_MAX)
        return true;
    if (!(*out = malloc((size_t)len + 1)) || !read_full(r, *out, len))
        return false;
    (*out)[len] = '\0';
    return true;
}

/* In the child: reads one request into cc; false at the end of the socket. */
static bool get_request(reader *r, nopi_cc *cc)
{
    char kind;
    if (!read_full(r, &kind, 1) || !get_bytes(r, &cc->tcc_dir))
        return false;
    cc->kind = (nopi_cc_kind)(kind - 'a');
    for (;;) {
        char k;
        char *a, *b;
        if (!read_full(r, &k, 1))
            return false;
        if (k == 'x')
            return true;
        if (!get_bytes(r, &a) || !get_bytes(r, &b))
            return false;
        record(cc, (opkind)(k - 'a'), a, b);
        free(a);
        free(b);
        if (cc->nomem)
            _exit(EXIT_MEMORY);
    }
}

static _Noreturn void serve(nopi_confine *c, int fd)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {   /* nothing libtcc or an exit() flush writes reaches neuronop's output */
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    signal(SIGPIPE, SIG_DFL);
    nopi_confine cpu_free = *c;
    cpu_free.cpu_seconds = 0;   /* per request, below */
    if (nopi_confine_child(&cpu_free, false, nopi_confine_address_space()) != 0)
        _exit(EXIT_FAILURE);
    bool prescan_first = c->write && !nopi_confine_landlock();
    static reader in;   /* the child's own: it never returns */
    in.fd = fd;
    for (;;) {
        nopi_cc *cc = calloc(1, sizeof *cc);
        if (!cc)
            _exit(EXIT_MEMORY);
        cc->confine = c;
        cc->pipe = fd;
        if (!get_request(&in, cc))
            _exit(0);
        if (c->cpu_seconds) {   /* this compile's CPU time, on top of what earlier ones used */
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            rlim_t used = (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1;
            struct rlimit r = { used + c->cpu_seconds, used + c->cpu_seconds + 1 };
            setrlimit(RLIMIT_CPU, &r);
        }
        TCCState *s = NULL;
        int step = prescan_first ? prescan(cc) : -1;
        if (step < 0)
            step = replay(cc, &s);
        if (s)
            tcc_delete(s);
        char end[16];
        snprintf(end, sizeof end, "%d", step);
        send_record(fd, 'E', end);
        cc->s = NULL;
        nopi_cc_free(cc);
    }
}

static struct nopi_ccserver *start_server(nopi_confine *c, nop_error *err)
{
    struct nopi_ccserver *srv = calloc(1, sizeof *srv);
    int fds[2];
    if (!srv)
        return nopi_nomem(err), NULL;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0 ||
        (srv->pid = fork()) < 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot start the compiler: %s",
                  strerror(errno));
        free(srv);
        return NULL;
    }
    if (srv->pid == 0) {
        close(fds[0]);
        serve(c, fds[1]);
    }
    setpgid(srv->pid, srv->pid);   /* as the child does (nopi_confine_child) */
    close(fds[1]);
    srv->sock = fds[0];
    return srv;
}

/* Ends the server: at the end of its socket it exits; a killed one is reaped. */
static void end_server(nopi_confine *c, bool kill_it, int *status, double *cpu)
{
    struct nopi_ccserver *srv = c->server;
    if (!srv)
        return;
    if (kill_it) {
        kill(-srv->pid, SIGKILL);
        kill(srv->pid, SIGKILL);
    }
    if (srv->sock >= 0)
        close(srv->sock);
    int st = 0;
    struct rusage ru = { 0 };
    nopi_reap_group_usage(srv->pid, &st, &ru);   /* and its group, as any compiler's */
    if (status)
        *status = st;
    if (cpu)
        *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    free(srv);
    c->server = NULL;
}

void nopi_cc_server_release(nopi_confine *c)
{
    if (c->server && c->server->sock >= 0) {
        close(c->server->sock);
        c->server->sock = -1;
    }
}

void nopi_cc_server_stop(nopi_confine *c)
{
    end_server(c, false, NULL, NULL);
}

/* True when the inbox holds a complete end record. */
static bool has_end(const inbox *in)
{
    size_t at = 0;
    while (at + 5 <= in->len) {
        uint32_t len;
        memcpy(&len, in->data + at + 1, 4);
        if (at + 5 + len > in->len)
            return false;
        if (in->data[at] == 'E')
            return true;
        at += 5 + len;
    }
    return false;
}

/* Sends the request and reads the answer up to its end record, the end of the socket (the
 * child died) or the deadline: 0, 1 at the deadline, -1 when the child died. */
static int exchange(nopi_cc *cc, inbox *in)
{
    struct nopi_ccserver *srv = cc->confine->server;
    size_t len;
    char *req = request(cc, &len);
    bool sent = req != NULL;
    for (size_t off = 0; sent && off < len;) {
        ssize_t w = send(srv->sock, req + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        sent = w > 0;
        off += w > 0 ? (size_t)w : 0;
    }
    free(req);
    if (!sent)
        return -1;
    double end = cc->confine->cpu_seconds ? nopi_now() + cc->confine->cpu_seconds : 0;
    while (!has_end(in) && !in->full) {
        int wait_ms = -1;
        if (end > 0) {
            double left = end - nopi_now();
            if (left <= 0)
                return 1;
            wait_ms = (int)(left * 1000) + 1;
        }
        struct pollfd p = { .fd = srv->sock, .events = POLLIN };
        int r = poll(&p, 1, wait_ms);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        char buf[8192];
        ssize_t n = read(srv->sock, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return -1;
        if (n > 0)
            take(in, buf, (size_t)n);
    }
    return 0;
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
    nopi_confine *c = cc->confine;
    if (c->server && c->server->sock < 0)   /* released: it is ending; a new one serves */
        end_server(c, false, NULL, NULL);
    if (!c->server && !(c->server = start_server(c, err)))
        return -1;
    inbox in = { 0 };
    int ended = exchange(cc, &in);
    int status = 0;
    double cpu = 0;
    if (ended != 0)   /* past the deadline (killed now), or it died: reap it */
        end_server(c, ended == 1, &status, &cpu);
    bool memory = ended < 0 && ((WIFEXITED(status) && WEXITSTATUS(status) == EXIT_MEMORY) ||
                                (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ));
    cc->err = err;
    int step = read_records(cc, &in, &memory);
    free(in.data);
    /* An allocator that gives up by itself (AddressSanitizer's, in a sanitized neuronop)
     * exits without a word from libtcc and before the end record: libtcc's own exits are
     * for bad options, which never reach it, and full memory, which it says. */
    memory = memory || (ended < 0 && step == -2 && !cc->failed && WIFEXITED(status) &&
                        WEXITSTATUS(status) != 0);
    bool time = ended == 1 || (ended < 0 && WIFSIGNALED(status) &&
                               (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL));
    if (ended != 0 || step == -2) {
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
