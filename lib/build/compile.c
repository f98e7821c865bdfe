/*
 * compile.c - the libtcc boundary (see compile.h).
 */
#include <libtcc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"

struct nopi_cc {
    TCCState *s;
    nopi_cc_kind kind;
    bool started;          /* the output type is set: no more options */
    nop_diag_fn *diag;
    void *ctx;
    nop_error *err;        /* where the current call records its first error */
    bool failed;           /* an error was recorded during the current call */
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

static void on_message(void *opaque, const char *msg)
{
    nopi_cc *cc = opaque;
    nop_diag d;
    parse_message(msg, &d);
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

nopi_cc *nopi_cc_new(nopi_cc_kind kind, const char *tcc_dir, nop_diag_fn *diag, void *ctx)
{
    nopi_cc *cc = calloc(1, sizeof *cc);
    if (!cc || !(cc->s = tcc_new())) {
        free(cc);
        return NULL;
    }
    cc->diag = diag;
    cc->ctx = ctx;
    tcc_set_error_func(cc->s, cc, on_message);
    if (tcc_dir)
        tcc_set_lib_path(cc->s, tcc_dir);
    cc->kind = kind;
    return cc;
}

/* libtcc reads options such as -g and -nostdlib when the output type is set (it creates the
 * debug sections then, and adds the C runtime's start files), and an option set after that
 * crashes it (-g) or is ignored: so the type is set once every option is in, just before
 * the first compile. */
static void start(nopi_cc *cc)
{
    if (cc->started)
        return;
    tcc_set_output_type(cc->s, cc->kind == NOPI_CC_OBJECT ? TCC_OUTPUT_OBJ
                               : cc->kind == NOPI_CC_SHARED ? TCC_OUTPUT_DLL : TCC_OUTPUT_MEMORY);
    cc->started = true;
}

void nopi_cc_free(nopi_cc *cc)
{
    if (!cc)
        return;
    tcc_delete(cc->s);
    free(cc);
}

void nopi_cc_define(nopi_cc *cc, const char *name, const char *value)
{
    tcc_define_symbol(cc->s, name, value);
}

void nopi_cc_undefine(nopi_cc *cc, const char *name)
{
    tcc_undefine_symbol(cc->s, name);
}

void nopi_cc_include_dir(nopi_cc *cc, const char *dir)
{
    tcc_add_include_path(cc->s, dir);
}

void nopi_cc_option(nopi_cc *cc, const char *option)
{
    if (!cc->started)   /* see start() */
        tcc_set_options(cc->s, option);
}

/* Runs one libtcc call with error capture; a failure without a message still gets one. */
static int finish(nopi_cc *cc, int rc, nop_error *err, const char *what)
{
    bool failed = cc->failed || rc < 0;
    if (failed && !cc->failed)
        nopi_fail(err, NOP_ERR_COMPILE, NULL, 0, 0, "%s failed", what);
    cc->err = NULL;
    cc->failed = false;
    return failed ? -1 : 0;
}

int nopi_cc_compile(nopi_cc *cc, const char *text, nop_error *err)
{
    start(cc);
    cc->err = err;
    return finish(cc, tcc_compile_string(cc->s, text), err, "compiling");
}

int nopi_cc_add_object(nopi_cc *cc, const char *path, nop_error *err)
{
    start(cc);
    cc->err = err;
    return finish(cc, tcc_add_file(cc->s, path), err, "loading an object file");
}

int nopi_cc_output(nopi_cc *cc, const char *path, nop_error *err)
{
    start(cc);
    cc->err = err;
    return finish(cc, tcc_output_file(cc->s, path), err, "linking");
}

int nopi_cc_relocate(nopi_cc *cc, nop_error *err)
{
    start(cc);
    cc->err = err;
    return finish(cc, tcc_relocate(cc->s, TCC_RELOCATE_AUTO), err, "linking in memory");
}

void *nopi_cc_symbol(nopi_cc *cc, const char *name)
{
    return tcc_get_symbol(cc->s, name);
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
