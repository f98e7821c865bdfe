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
 *   3. each source compiled to an object in a private temporary folder (objects.c): C by
 *      libtcc (or cc), wrapped in its prelude (gen.c) so signatures are checked; C++ by the
 *      system C++ compiler, first, since its NEURON_LIBRARY registration may give the ops
 *      (register.c) and C++ functions are found by their mangled names (resolve.c); then
 *      the checks (check.c): compute objects may only need device symbols.
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
#include "syscc.h"

static int compile_all(builder *b)
{
    int nobjs = b->nsources, rc = 0;
    object *objs = calloc((size_t)b->nsources, sizeof *objs);
    if (!objs)
        return nopi_nomem(b->err);
    /* the system compilers first: the registration in C++ shape sources gives the ops that
     * the preludes of the C sources declare */
    rc = nopi_build_compile_system(b, objs);
    if (rc == 0)
        rc = nopi_build_registration(b, objs, nobjs);
    if (rc == 0)
        rc = nopi_build_compile_tcc(b, objs);
    if (rc == 0)
        rc = nopi_build_resolve(b, objs, nobjs);
    if (rc == 0)
        rc = nopi_check_device_symbols(b, objs, nobjs);
    if (rc == 0)
        rc = nopi_check_definitions(b, objs, nobjs);
    if (rc == 0)
        rc = nopi_check_references(b, objs, nobjs);
    if (rc == 0)
        rc = nopi_build_link(b, objs, nobjs);
    nopi_cc_server_release(&b->confine);   /* no compile is left: it ends meanwhile */
    if (rc == 0)
        rc = nopi_build_record(b);
    for (int i = 0; i < nobjs; i++) {
        free(objs[i].path);
        nopi_elfsyms_free(objs[i].syms, objs[i].nsyms);
    }
    free(objs);
    return rc;
}

/* ---- the entry point -------------------------------------------------------------------- */

nopi_lang nopi_build_lang(const builder *b, int i)
{
    if (nopi_is_cxx_source(b->sources[i].file))
        return NOPI_LANG_CXX;
    /* memcheck's instrumentation is libtcc's: a memcheck build compiles C with it */
    return b->cc && !b->o->memcheck ? NOPI_LANG_CC : NOPI_LANG_TCC;
}

/* compiler: from the build option, else the manifest; and the C++ sources' memcheck rule. */
static int choose_compilers(builder *b)
{
    const char *opt = b->o->compiler;
    if (opt && strcmp(opt, "cc") != 0 && strcmp(opt, "tcc") != 0)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "unknown compiler '%s'; use "
                         "'tcc' or 'cc'", opt);
    b->cc = opt ? strcmp(opt, "cc") == 0 : b->m->compiler_cc;
    for (int i = 0; i < b->nsources; i++) {
        nopi_lang lang = nopi_build_lang(b, i);
        b->system_link = b->system_link || lang != NOPI_LANG_TCC;
    }
    return 0;
}

/* What a compiler may read: the library folder, neuronop's and tcc's headers, the system's,
 * the include folders the manifest names (all inside the library folder, manifest.c) and,
 * for C++, the folder of precompiled standard headers (pch.h); and the limits. */
static int confine(builder *b)
{
    nopi_confine *c = &b->confine;
    nopi_confine_read(c, b->o->library_dir ? b->o->library_dir : b->m->dir);
    nopi_confine_read(c, b->include_dir);
    nopi_confine_read(c, b->tcc_dir);
    nopi_confine_read(c, "/usr/include");
    nopi_confine_read(c, "/usr/local/include");
    for (int i = 0; i < b->m->nincludes; i++)
        nopi_confine_read(c, b->m->includes[i].resolved);
    for (int i = 0; i < b->m->nflags; i++)
        if (b->m->flags[i].kind == NOPI_FLAG_INCLUDE)
            nopi_confine_read(c, b->m->flags[i].value);
    bool cxx = false;
    for (int i = 0; i < b->nsources; i++)
        cxx = cxx || nopi_build_lang(b, i) == NOPI_LANG_CXX;
    if (cxx)
        nopi_pch_open(&b->pch, nopi_cxx_program(b->m->cxx));
    if (b->pch.root)
        nopi_confine_read(c, b->pch.root);
    c->cpu_seconds = b->o->compile_seconds ? b->o->compile_seconds : NOPI_COMPILE_SECONDS;
    c->mem_mb = b->o->compile_mb ? b->o->compile_mb : NOPI_COMPILE_MB;
    return nopi_confine_resolve(c) == 0 ? 0 : nopi_nomem(b->err);
}

static int setup(builder *b)
{
    b->mcopy = *b->m;   /* the registration may fill in its ops */
    b->m = &b->mcopy;
    b->reg_ops = !b->m->ops_given;
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
    if (nopi_manifest_check_paths(b->m, b->o->library_dir, b->err) != 0)
        return -1;
    if (b->o->build_dir)   /* the command line's choice: the user's, not the manifest's */
        b->mcopy.build_dir = (char *)b->o->build_dir;
    else if (nopi_build_dir_check(b->m, b->err) != 0)
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
    return choose_compilers(b) == 0 ? confine(b) : -1;
}

/* Compiles and links the library in a temporary folder of its own, which it removes; 0, or
 * -1 with b->err filled. */
static int build_once(builder *b)
{
    b->tmpdir = nopi_path_join(b->m->build_dir, ".neuronop-tmp-XXXXXX");
    if (!b->tmpdir || !mkdtemp(b->tmpdir)) {
        int e = errno;
        free(b->tmpdir);
        b->tmpdir = NULL;
        int rc = nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot create a temporary "
                           "folder in '%s': %s", b->m->build_dir, strerror(e));
        nopi_build_unwritable(b, e);
        return rc;
    }
    b->confine.write = b->tmpdir;   /* the compilers' only writable folder */
    int rc = compile_all(b);
    nopi_build_remove_tree(b->tmpdir);
    b->confine.write = NULL;
    free(b->tmpdir);
    b->tmpdir = NULL;
    return rc;
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
    if (nopi_mkdirs(b->m->build_dir) != 0) {
        /* at the manifest's build_directory when it chose the folder; the command line's
         * choice is not the manifest's fault */
        bool manifest = !b->o->build_dir;
        return nopi_fail(b->err, NOP_ERR_INPUT, manifest ? b->m->path : NULL,
                         manifest ? b->m->build_dir_pos.line : 0,
                         manifest ? b->m->build_dir_pos.col : 0,
                         "cannot create build directory '%s': %s", b->m->build_dir,
                         strerror(errno));
    }
    int lock;
    if (nopi_build_lock(b, &lock) != 0)
        return -1;
    nopi_build_remove_leftovers(b);
    int rc = 0;
    /* after a wait, the inputs as they are now, not as they were before the lock: another
     * build may have made the library, or the sources been edited meanwhile (a red team's
     * edit during the wait was built under the old key's stamp).  Without one, the key is
     * a moment old, and the link looks again before it installs (nopi_build_unchanged). */
    if (b->waited && nopi_build_key(b) != 0)
        rc = -1;
    else if (!b->o->force && nopi_build_up_to_date(b))
        res->up_to_date = true;
    else
        rc = build_once(b);
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
    res->cached = b.cached;
    res->seconds = nopi_now() - t0;
    free(b.include_dir);
    free(b.lib_path);
    free(b.stamp_path);
    free(b.lock_path);
    free(b.sources);
    nopi_cc_server_stop(&b.confine);
    free(b.tmpdir);
    nopi_confine_free(&b.confine);
    nopi_pch_free(&b.pch);
    nopi_build_registration_free(&b);
    return rc;
}
