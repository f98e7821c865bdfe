/*
 * build.c - `neuronop build`: a validated manifest in, build/lib<name>.so out.
 *
 * The pipeline, in order:
 *   1. the build key: a hash of neuronop itself, the manifest, every source, every header
 *      the build can see (the sources' folders, the include paths, neuronop's own include
 *      folder), the flags and the options.  If the stamp beside the library records the same
 *      key and the library's own hash, nothing is compiled (buildkey.c).
 *   2. an flock on <build_dir>/.neuronop.lock (with a timeout), so concurrent builds of one
 *      folder take turns; the kernel drops the lock if a build dies, so it never goes stale
 *      (buildfs.c, which also clears what killed builds left behind).
 *   3. each source compiled by libtcc to an object in a private temporary folder, wrapped in
 *      its prelude (gen.c) so signatures are checked; compute objects may only need device
 *      symbols.
 *   4. the glue compiled and linked with the objects into a temporary file, renamed over the
 *      library, then the stamp written the same way: a reader sees the old library or the new
 *      one, never half of one, and a failed build leaves no stamp that could call it current.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builder.h"
#include "compile.h"
#include "base/elfsyms.h"

/* ---- compiling -------------------------------------------------------------------------- */

static void note_step(builder *b, const char *what, const char *path, bool instrument)
{
    if (!b->o->verbose)
        return;
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_printf(&sb, "%s %s: libtcc -I%s", what, path, b->include_dir);
    for (int i = 0; i < b->m->nincludes; i++)
        nopi_sb_printf(&sb, " -I%s", b->m->includes[i].resolved);
    for (int i = 0; i < b->m->nflags; i++)
        nopi_sb_printf(&sb, " %s", b->m->flags[i].text);
    if (instrument)
        nopi_sb_puts(&sb, " -b -g");
    nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0, "%s",
              sb.s ? sb.s : what);
    nopi_sb_free(&sb);
}

/* instrument: compile with libtcc's bounds checking and the debug info that maps an access
 * back to its line (memcheck builds, kernel sources only: shape functions and references
 * are host code, and the glue must stay uninstrumented). */
static nopi_cc *new_cc(builder *b, nopi_cc_kind kind, const char *source_dir, bool instrument)
{
    nopi_cc *cc = nopi_cc_new(kind, b->tcc_dir, b->o->diag, b->o->diag_ctx);
    if (!cc)
        return NULL;
    nopi_cc_include_dir(cc, b->include_dir);
    if (source_dir)   /* #include "x.h" next to the source, as a compiler would */
        nopi_cc_include_dir(cc, source_dir);
    for (int i = 0; i < b->m->nincludes; i++)
        nopi_cc_include_dir(cc, b->m->includes[i].resolved);
    for (int i = 0; i < b->m->nflags; i++) {
        const nopi_flag *f = &b->m->flags[i];
        switch (f->kind) {
        case NOPI_FLAG_DEFINE: nopi_cc_define(cc, f->name, f->value); break;
        case NOPI_FLAG_UNDEF: nopi_cc_undefine(cc, f->name); break;
        case NOPI_FLAG_INCLUDE: nopi_cc_include_dir(cc, f->value); break;
        case NOPI_FLAG_OPTION: nopi_cc_option(cc, f->text); break;
        }
    }
    if (b->m->stack_from == NOP_STACK_KEY) {   /* kernels see STACK_SIZE either way */
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)b->m->stack_size);
        nopi_cc_define(cc, "STACK_SIZE", v);
    }
    if (instrument)
        nopi_cc_option(cc, "-b -g");
    if (kind == NOPI_CC_SHARED) {
        /* A library's own definitions (its trampolines) bind before any same-named symbol
         * in the process: kernel calls reach the device, never the host's libc by accident. */
        nopi_cc_option(cc, "-Wl,-Bsymbolic");
        /* Do not link against libc or the C runtime's start files: the library is only ever
         * loaded into neuronop, which has libc and libm, and reading libc's symbol table was
         * a fifth of a build.  link_library adds libtcc1.a, tcc's own helpers. */
        nopi_cc_option(cc, "-nostdlib");
    }
    return cc;
}

/* The function a source of this role must define for op i (or test i, for references). */
static const char *role_function(const builder *b, nopi_role role, int i)
{
    if (role == NOPI_ROLE_REFERENCE)
        return i < b->m->ntests ? b->m->tests[i].reference : NULL;
    return i >= b->m->nops ? NULL : role == NOPI_ROLE_COMPUTE ? b->m->ops[i].kernel
                                                             : b->m->ops[i].shape;
}

/* When tcc refuses a definition because the prelude declared it otherwise, say which op
 * declared what. */
static void explain_signature(builder *b, nopi_role role)
{
    const char *msg = b->err ? b->err->diag.msg : "";
    if (!strstr(msg, "redefinition of '"))
        return;
    int n = role == NOPI_ROLE_REFERENCE ? b->m->ntests : b->m->nops;
    for (int i = 0; i < n; i++) {
        const char *fname = role_function(b, role, i);
        if (!fname)
            continue;
        const nopi_op *op = role == NOPI_ROLE_REFERENCE ? &b->m->ops[b->m->tests[i].op]
                                                         : &b->m->ops[i];
        char quoted[300];
        snprintf(quoted, sizeof quoted, "'%s'", fname);
        if (!strstr(msg, quoted))
            continue;
        char *sig = nopi_gen_signature(op, fname);
        nopi_strbuf args = NOPI_STRBUF_INIT;
        for (int k = 0; k < op->nargs; k++)
            nopi_sb_printf(&args, "%s%s", k ? ", " : "", nopi_argtype_names[op->args[k]]);
        nopi_detail(b->err, "op '%s' declares args [%s] in %s:%d, so its %s function must be:",
                    op->name, args.s ? args.s : "", b->m->path, op->pos.line,
                    role == NOPI_ROLE_COMPUTE ? "kernel"
                    : role == NOPI_ROLE_SHAPE ? "shape" : "reference");
        nopi_detail(b->err, "    %s", sig ? sig : fname);
        nopi_detail(b->err, "fix the definition or the op's args");
        nopi_sb_free(&args);
        free(sig);
        return;
    }
}

/* Finds the first whole-word use of `word` in a source, for pointing at a forbidden call. */
static void locate_word(const char *path, const char *word, int *line, int *col)
{
    *line = *col = 0;
    char *text;
    if (nopi_read_file(path, &text, NULL) != 0)
        return;
    size_t n = strlen(word);
    int l = 1;
    const char *bol = text;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            l++;
            bol = p + 1;
            continue;
        }
        bool starts = p == text || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                     (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                     (p[-1] >= '0' && p[-1] <= '9'));
        char after = p[n];
        if (starts && strncmp(p, word, n) == 0 &&
            !(after == '_' || (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
              (after >= '0' && after <= '9'))) {
            *line = l;
            *col = (int)(p - bol) + 1;
            break;
        }
    }
    free(text);
}

typedef struct object {
    char *path;
    nopi_role role;
    const char *source;
    nopi_elfsym *syms;
    size_t nsyms;
} object;

static int compile_source(builder *b, const char *path, nopi_role role, int index,
                          object *obj)
{
    obj->role = role;
    obj->source = path;
    char name[64];
    static const char *const prefix[] = { "compute", "shape", "reference" };
    snprintf(name, sizeof name, "%s%d.o", prefix[role], index);
    if (!(obj->path = nopi_path_join(b->tmpdir, name)))
        return nopi_nomem(b->err);
    char *text;
    if (nopi_read_file(path, &text, NULL) != 0)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read '%s': %s", path,
                         strerror(errno));
    char *unit = nopi_gen_unit(b->m, role, path, text);
    free(text);
    char *dir = nopi_dirname(path);
    bool instrument = b->o->memcheck && role == NOPI_ROLE_COMPUTE;
    nopi_cc *cc = unit && dir ? new_cc(b, NOPI_CC_OBJECT, dir, instrument) : NULL;
    free(dir);
    int rc = -1;
    if (!cc) {
        nopi_nomem(b->err);
    } else {
        note_step(b, role == NOPI_ROLE_COMPUTE ? "compile (device)"
                     : role == NOPI_ROLE_SHAPE ? "compile (host)" : "compile (reference)", path,
                  instrument);
        rc = nopi_cc_compile(cc, unit, b->err);
        if (rc != 0)
            explain_signature(b, role);
        else
            rc = nopi_cc_output(cc, obj->path, b->err);
        b->compiled++;
    }
    nopi_cc_free(cc);
    free(unit);
    if (rc == 0)
        rc = nopi_elfsyms_read(obj->path, &obj->syms, &obj->nsyms, b->err);
    return rc;
}

static bool defines(const object *o, const char *name, bool *is_function)
{
    for (size_t i = 0; i < o->nsyms; i++) {
        if (o->syms[i].defined && strcmp(o->syms[i].name, name) == 0) {
            *is_function = o->syms[i].function;
            return true;
        }
    }
    return false;
}

/* Compute objects may need only device symbols or what other compute objects define. */
static int check_device_symbols(builder *b, const object *objs, int nobjs)
{
    for (int i = 0; i < nobjs; i++) {
        if (objs[i].role != NOPI_ROLE_COMPUTE)
            continue;
        for (size_t k = 0; k < objs[i].nsyms; k++) {
            const nopi_elfsym *s = &objs[i].syms[k];
            if (s->defined || nopi_device_symbol_allowed(s->name))
                continue;
            bool found = false, fn;
            for (int j = 0; j < nobjs && !found; j++)
                found = objs[j].role == NOPI_ROLE_COMPUTE && defines(&objs[j], s->name, &fn);
            if (found)
                continue;
            int line, col;
            locate_word(objs[i].source, s->name, &line, &col);
            nopi_fail(b->err, NOP_ERR_COMPILE, objs[i].source, line, col,
                      "kernel code uses '%s', which the device does not have", s->name);
            nopi_detail(b->err, "compute sources run on GPSIMD cores and may use only the "
                        "neuronop kernel API, printf, memory and string functions and math.h;"
                        " move host work into a shape function");
            return -1;
        }
    }
    return 0;
}

/* Every declared kernel is defined as a function in a compute source, every shape function
 * in a shape source. */
static int check_definitions(builder *b, const object *objs, int nobjs)
{
    for (int i = 0; i < b->m->nops; i++) {
        const nopi_op *op = &b->m->ops[i];
        for (int r = 0; r < 2; r++) {
            nopi_role role = r == 0 ? NOPI_ROLE_COMPUTE : NOPI_ROLE_SHAPE;
            const char *fname = role == NOPI_ROLE_COMPUTE ? op->kernel : op->shape;
            nopi_pos pos = role == NOPI_ROLE_COMPUTE ? op->kernel_pos : op->shape_pos;
            const char *where = role == NOPI_ROLE_COMPUTE ? "compute_srcs" : "shape_srcs";
            bool found = false, fn = false, elsewhere = false;
            for (int j = 0; j < nobjs && !found; j++) {
                if (objs[j].role == role)
                    found = defines(&objs[j], fname, &fn);
                else if (defines(&objs[j], fname, &fn))
                    elsewhere = true;
            }
            if (found && fn)
                continue;
            if (found)
                return nopi_fail(b->err, NOP_ERR_COMPILE, b->m->path, pos.line, pos.col,
                                 "'%s' of op '%s' is defined, but not as a function", fname,
                                 op->name);
            nopi_fail(b->err, NOP_ERR_COMPILE, b->m->path, pos.line, pos.col,
                      "%s function '%s' of op '%s' is not defined in %s",
                      role == NOPI_ROLE_COMPUTE ? "kernel" : "shape", fname, op->name, where);
            if (elsewhere)
                nopi_detail(b->err, "it is defined in %s; %s",
                            role == NOPI_ROLE_COMPUTE ? "shape_srcs" : "compute_srcs",
                            role == NOPI_ROLE_COMPUTE
                                ? "kernels run on the device: move it to a compute source"
                                : "shape functions run on the host: move it to a shape "
                                  "source");
            else {
                char *sig = nopi_gen_signature(op, fname);
                nopi_detail(b->err, "define it, with this signature:\n    %s", sig ? sig : "");
                free(sig);
            }
            return -1;
        }
    }
    return 0;
}

static int link_library(builder *b, const object *objs, int nobjs)
{
    nopi_gen_info info = { b->m, b->sources, b->nsources, b->key, b->o->memcheck };
    char *glue = nopi_gen_glue(&info);
    nopi_cc *cc = glue ? new_cc(b, NOPI_CC_SHARED, NULL, false) : NULL;
    char *tmp = nopi_path_join(b->tmpdir, "library.so");
    int rc = -1;
    if (!cc || !tmp) {
        nopi_nomem(b->err);
        goto out;
    }
    note_step(b, "link", b->lib_path, false);
    if (nopi_cc_compile(cc, glue, b->err) != 0) {
        nopi_detail(b->err, "(in the glue neuronop generates; this is a neuronop bug, "
                    "please report it)");
        goto out;
    }
    for (int i = 0; i < nobjs; i++)
        if (nopi_cc_add_object(cc, objs[i].path, b->err) != 0)
            goto out;
    char libtcc1[1100];
    snprintf(libtcc1, sizeof libtcc1, "%s/libtcc1.a", b->tcc_dir);
    if (nopi_cc_add_object(cc, libtcc1, b->err) != 0)
        goto out;
    if (nopi_cc_output(cc, tmp, b->err) != 0)
        goto out;
    if (rename(tmp, b->lib_path) != 0) {
        nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot write '%s': %s", b->lib_path,
                  strerror(errno));
        goto out;
    }
    rc = 0;
out:
    nopi_cc_free(cc);
    free(glue);
    free(tmp);
    return rc;
}

/* Every reference function a test names is defined, as a function, in reference_srcs. */
static int check_references(builder *b, const object *objs, int nobjs)
{
    for (int i = 0; i < b->m->ntests; i++) {
        const nopi_test *t = &b->m->tests[i];
        if (!t->reference)
            continue;
        bool found = false, fn = false;
        for (int j = 0; j < nobjs && !found; j++)
            if (objs[j].role == NOPI_ROLE_REFERENCE)
                found = defines(&objs[j], t->reference, &fn);
        if (found && fn)
            continue;
        nopi_fail(b->err, NOP_ERR_COMPILE, b->m->path, t->reference_pos.line,
                  t->reference_pos.col, "reference function '%s' of test '%s' is not defined "
                  "in reference_srcs", t->reference, t->name);
        char *sig = nopi_gen_signature(&b->m->ops[t->op], t->reference);
        nopi_detail(b->err, "define it, with its op's signature:\n    %s", sig ? sig : "");
        free(sig);
        return -1;
    }
    return 0;
}

static int compile_all(builder *b)
{
    int nobjs = 0, rc = 0;
    object *objs = calloc((size_t)b->nsources, sizeof *objs);
    if (!objs)
        return nopi_nomem(b->err);
    for (int i = 0; rc == 0 && i < b->nsources; i++, nobjs++)
        rc = compile_source(b, b->sources[i].file, b->sources[i].role, i, &objs[i]);
    if (rc == 0)
        rc = check_device_symbols(b, objs, nobjs);
    if (rc == 0)
        rc = check_definitions(b, objs, nobjs);
    if (rc == 0)
        rc = check_references(b, objs, nobjs);
    if (rc == 0)
        rc = link_library(b, objs, nobjs);
    if (rc == 0) {
        char libhash[33], stamp[256];
        rc = nopi_hash_file(b->lib_path, libhash);
        if (rc != 0)
            nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read back '%s'",
                      b->lib_path);
        snprintf(stamp, sizeof stamp, STAMP_MAGIC "\nkey %s\nlibrary %s\n", b->key, libhash);
        if (rc == 0)
            rc = nopi_build_write_atomically(b, b->stamp_path, stamp);
    }
    for (int i = 0; i < nobjs; i++) {
        free(objs[i].path);
        nopi_elfsyms_free(objs[i].syms, objs[i].nsyms);
    }
    free(objs);
    return rc;
}

/* ---- the entry point -------------------------------------------------------------------- */

static int setup(builder *b)
{
    const nop_manifest *m = b->m;
    if (!b->o->share_dir)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "no share folder given");
    b->include_dir = nopi_path_join(b->o->share_dir, "include");
    char *header = b->include_dir ? nopi_path_join(b->include_dir, "neuronop.h") : NULL;
    bool have_header = header && access(header, R_OK) == 0;
    free(header);
    if (!have_header) {
        nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot find neuronop.h in '%s'",
                  b->include_dir ? b->include_dir : "?");
        nopi_detail(b->err, "reinstall neuronop, or set NEURONOP_SHARE_DIR to its "
                    "share/neuronop folder");
        return -1;
    }
    if (b->o->tcc_dir)
        nopi_strlcpy(b->tcc_dir, b->o->tcc_dir, sizeof b->tcc_dir);
    else if (nop_find_tcc_dir(b->tcc_dir, sizeof b->tcc_dir, b->err) != 0)
        return -1;
    char name[300];
    /* a memcheck build sits next to the plain one, so switching does not rebuild either */
    const char *variant = b->o->memcheck ? ".memcheck" : "";
    snprintf(name, sizeof name, "lib%s%s.so", m->name, variant);
    b->lib_path = nopi_path_join(m->build_dir, name);
    snprintf(name, sizeof name, "lib%s%s.so.stamp", m->name, variant);
    b->stamp_path = nopi_path_join(m->build_dir, name);
    b->lock_path = nopi_path_join(m->build_dir, ".neuronop.lock");
    b->nsources = m->ncompute + m->nshape + m->nreference;
    b->sources = calloc((size_t)b->nsources, sizeof *b->sources);
    if (!b->lib_path || !b->stamp_path || !b->lock_path || !b->sources)
        return nopi_nomem(b->err);
    for (int i = 0; i < b->nsources; i++) {
        const nopi_src *src;
        nopi_role role;
        if (i < m->ncompute)
            src = &m->compute[i], role = NOPI_ROLE_COMPUTE;
        else if (i < m->ncompute + m->nshape)
            src = &m->shape[i - m->ncompute], role = NOPI_ROLE_SHAPE;
        else
            src = &m->reference[i - m->ncompute - m->nshape], role = NOPI_ROLE_REFERENCE;
        b->sources[i].path = src->path;
        b->sources[i].file = src->resolved;
        b->sources[i].role = role;
    }
    return 0;
}

static int run(builder *b, nop_build_result *res)
{
    if (setup(b) != 0 || nopi_build_key(b) != 0)
        return -1;
    nopi_strlcpy(res->lib_path, b->lib_path, sizeof res->lib_path);
    if (!b->o->force && nopi_build_up_to_date(b)) {
        res->up_to_date = true;
        nopi_build_clean_if_idle(b);   /* what a killed build left, even when up to date */
        return 0;
    }
    if (nopi_mkdirs(b->m->build_dir) != 0)
        return nopi_fail(b->err, NOP_ERR_INPUT, b->m->path, 0, 0,
                         "cannot create build directory '%s': %s", b->m->build_dir,
                         strerror(errno));
    int lock;
    if (nopi_build_lock(b, &lock) != 0)
        return -1;
    int rc = 0;
    /* another build may have finished while we waited */
    nopi_build_remove_leftovers(b);
    if (!b->o->force && nopi_build_up_to_date(b)) {
        res->up_to_date = true;
        goto unlock;
    }
    b->tmpdir = nopi_path_join(b->m->build_dir, ".neuronop-tmp-XXXXXX");
    if (!b->tmpdir || !mkdtemp(b->tmpdir)) {
        rc = nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot create a temporary "
                       "folder in '%s': %s", b->m->build_dir, strerror(errno));
        goto unlock;
    }
    rc = compile_all(b);
    nopi_build_remove_tree(b->tmpdir);
unlock:
    close(lock);   /* releases the flock */
    return rc;
}

int nop_build(const nop_manifest *m, const nop_build_opts *opts, nop_build_result *res,
              nop_error *err)
{
    double t0 = nopi_now();
    memset(res, 0, sizeof *res);
    builder b = { .m = m, .o = opts, .err = err };
    int rc = run(&b, res);
    res->compiled = b.compiled;
    res->seconds = nopi_now() - t0;
    free(b.include_dir);
    free(b.lib_path);
    free(b.stamp_path);
    free(b.lock_path);
    free(b.sources);
    free(b.tmpdir);
    return rc;
}
