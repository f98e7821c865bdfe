/*
 * manifest.c - loads neuronop.yaml into a validated nop_manifest (see manifest.h).
 *
 * Validation happens here, once, so later stages can trust the manifest: every key known,
 * every type right, names usable as C identifiers, sources present, flags safe for libtcc,
 * one STACK_SIZE.  Each error points at the offending node and says what to write instead.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "mload.h"

static const char *const top_keys[] = {
    "name", "compute_srcs", "shape_srcs", "build_directory", "multicore", "extra_cflags",
    "extra_include_paths", "stack_size", "ops", "reference_srcs", "tests", "compiler", "cxx",
    "verbose", NULL
};
static const char *const op_keys[] = { "args", "shape", "kernel", NULL };


static int require(loader *L, const nopi_ynode *root, const char *key, const char *example)
{
    if (nopi_y_lookup(root, key))
        return 0;
    nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, root->line, root->col,
              "missing required key '%s'", key);
    nopi_detail(L->err, "add, for example: %s", example);
    return -1;
}

static int load_name(loader *L, const nopi_ynode *n)
{
    const char *name;
    if (nopi_y_string(L->doc, n, "name", &name, L->err) != 0)
        return -1;
    if (!nopi_is_identifier(name)) {
        nopi_y_error(L->doc, n, L->err, "library name '%s' is not a C identifier (letters, "
                     "digits and '_', not starting with a digit)", name);
        /* the name it could be: '_' for each other character, and my_ before a digit (a
         * new user's find: my-ops got no hint) */
        char hint[72];
        size_t at = (size_t)snprintf(hint, sizeof hint, "%s", isdigit((unsigned char)name[0])
                                                             ? "my_" : "");
        for (const char *p = name; *p && at + 1 < sizeof hint; p++)
            hint[at++] = isalnum((unsigned char)*p) && !((unsigned char)*p & 0x80) ? *p : '_';
        hint[at] = '\0';
        if (name[0] && nopi_is_identifier(hint))
            nopi_detail(L->err, "call it '%s', for example", hint);
        return -1;
    }
    if (strcmp(name, "builtin") == 0)
        return nopi_y_error(L->doc, n, L->err, "library name 'builtin' is reserved by the "
                            "Neuron runtime; choose another name");
    L->m->name = strdup(name);
    L->m->name_pos = pos_of(n);
    return L->m->name ? 0 : oom(L);
}

/* Whether two source entries name one file, however written ("a.c", "./a.c", "sub/../a.c",
 * a symlink to it). */
static bool same_file(const nopi_src *a, const nopi_src *b)
{
    return strcmp(a->real, b->real) == 0 || (a->dev == b->dev && a->ino == b->ino);
}

/* Of two entries naming one file, the second in the manifest's text: where a duplicate is
 * reported. */
static const nopi_src *second(const nopi_src *a, const nopi_src *b)
{
    return a->pos.line > b->pos.line || (a->pos.line == b->pos.line && a->pos.col > b->pos.col)
               ? a : b;
}

/* Says, after the error at the second of two entries naming one file, when they write it
 * differently (the error names only that one); -1. */
static int same_file_detail(nop_error *err, const nopi_src *a, const nopi_src *b)
{
    const nopi_src *at = second(a, b), *first = at == a ? b : a;
    if (strcmp(at->path, first->path) != 0)
        nopi_detail(err, "'%s' and '%s' are the same file", at->path, first->path);
    return -1;
}

/* The file of the folder resolved is in whose name is closest to its own (a new user's find:
 * 'kernel.c' for kernels.c got no hint), written as the manifest wrote path: into buf, true;
 * false when none is near. */
static bool closest_file(const char *path, const char *resolved, char *buf, size_t size)
{
    char *dir = nopi_dirname(resolved);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d)
        return false;
    enum { MAX_NAMES = 512 };
    char *names[MAX_NAMES];
    size_t n = 0;
    struct dirent *e;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    /* files only, and not the name itself (a dangling symlink of it: a reviewer's find) */
    while (n < MAX_NAMES && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, base) != 0 &&
            (e->d_type == DT_REG || e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) &&
            (names[n] = strdup(e->d_name)) != NULL)
            n++;
    closedir(d);
    const char *near = nop_closest(base, (const char *const *)names, n);
    if (near)
        snprintf(buf, size, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, near);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    return near != NULL;
}

static int load_sources(loader *L, const nopi_ynode *n, const char *key, nopi_src **out,
                        int *count)
{
    const nopi_ynode **items;
    size_t nitems;
    if (nopi_y_strings(L->doc, n, key, &items, &nitems, L->err) != 0)
        return -1;
    *out = calloc(nitems ? nitems : 1, sizeof **out);
    if (!*out)
        return oom(L);
    for (size_t i = 0; i < nitems; i++) {
        nopi_src *s = &(*out)[i];
        s->path = strdup(items[i]->str);
        s->resolved = nopi_path_join(L->m->dir, items[i]->str);
        s->pos = pos_of(items[i]);
        *count = (int)i + 1;
        if (!s->path || !s->resolved)
            return oom(L);
        struct stat st;
        if (stat(s->resolved, &st) == 0 && !S_ISREG(st.st_mode)) {
            return nopi_y_error(L->doc, items[i], L->err, "source file '%s' %s", s->path,
                                S_ISDIR(st.st_mode) ? "is a directory"
                                                    : "is not a regular file");
        } else if (stat(s->resolved, &st) != 0) {
            char near[512];
            if (closest_file(s->path, s->resolved, near, sizeof near))
                nopi_y_error(L->doc, items[i], L->err, "source file '%s' not found; did you "
                             "mean '%s'?", s->path, near);
            else
                nopi_y_error(L->doc, items[i], L->err, "source file '%s' not found", s->path);
            nopi_detail(L->err, "looked for '%s'; paths are relative to the manifest's folder",
                        s->resolved);
            return -1;
        }
        char real[4096] = "";   /* resolved as the outside-the-folder check resolves it */
        nopi_confine_within(L->m->dir, s->resolved, real, sizeof real);
        if (!(s->real = strdup(real[0] ? real : s->resolved)))   /* (none: a name too long) */
            return oom(L);
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        for (size_t j = 0; j < i; j++)
            if (same_file(&(*out)[j], s)) {
                nopi_y_error(L->doc, items[i], L->err, "'%s' is listed twice in '%s'", s->path,
                             key);
                return same_file_detail(L->err, s, &(*out)[j]);
            }
    }
    return 0;
}

static int load_include_paths(loader *L, const nopi_ynode *n)
{
    const nopi_ynode **items;
    size_t nitems;
    if (nopi_y_strings(L->doc, n, "extra_include_paths", &items, &nitems, L->err) != 0)
        return -1;
    L->m->includes = calloc(nitems ? nitems : 1, sizeof *L->m->includes);
    if (!L->m->includes)
        return oom(L);
    for (size_t i = 0; i < nitems; i++) {
        nopi_src *s = &L->m->includes[i];
        s->path = strdup(items[i]->str);
        s->resolved = nopi_path_join(L->m->dir, items[i]->str);
        s->pos = pos_of(items[i]);
        L->m->nincludes = (int)i + 1;
        if (!s->path || !s->resolved)
            return oom(L);
        struct stat st;
        if (stat(s->resolved, &st) != 0 || !S_ISDIR(st.st_mode))
            return nopi_y_error(L->doc, items[i], L->err, "include folder '%s' not found",
                                s->path);
    }
    return 0;
}

/* Records a STACK_SIZE from either place; a second, different value is an error. */
static int set_stack(loader *L, const nopi_ynode *at, int64_t value, enum nop_stack_from from)
{
    nop_manifest *m = L->m;
    if (m->stack_from != NOP_STACK_DEFAULT && m->stack_size != value) {
        nopi_y_error(L->doc, at, L->err, "the stack size is given twice, with different values "
                     "(%lld and %lld)", (long long)m->stack_size, (long long)value);
        nopi_detail(L->err, "the other is %s at line %d; keep one of them",
                    m->stack_from == NOP_STACK_CFLAGS ? "-DSTACK_SIZE in extra_cflags"
                                                      : "'stack_size'", m->stack_pos.line);
        return -1;
    }
    m->stack_size = value;
    m->stack_from = from;
    m->stack_pos = pos_of(at);
    return 0;
}

static int load_cflags(loader *L, const nopi_ynode *n)
{
    const nopi_ynode **items;
    size_t nitems;
    if (nopi_y_strings(L->doc, n, "extra_cflags", &items, &nitems, L->err) != 0)
        return -1;
    L->m->flags = calloc(nitems ? nitems : 1, sizeof *L->m->flags);
    if (!L->m->flags)
        return oom(L);
    for (size_t i = 0; i < nitems; i++) {
        nopi_flag *f = &L->m->flags[i];
        char why[512];
        if (nopi_flag_parse(items[i]->str, L->m->dir, f, why, sizeof why) != 0)
            return nopi_y_error(L->doc, items[i], L->err, "%s", why);
        f->pos = pos_of(items[i]);
        L->m->nflags = (int)i + 1;
        /* the build records the stack it was given, and kernels see it as STACK_SIZE
         * (neuronop.yaml(5)): -U would leave a recorded stack the kernels cannot see */
        if (f->kind == NOPI_FLAG_UNDEF && strcmp(f->name, "STACK_SIZE") == 0) {
            nopi_y_error(L->doc, items[i], L->err, "'%s' is not allowed: the STACK_SIZE "
                         "macro is neuronop's, the stack size the build records", f->text);
            nopi_detail(L->err, "remove it; to set the stack, write stack_size: N or "
                        "-DSTACK_SIZE=N");
            return -1;
        }
        if (f->kind == NOPI_FLAG_DEFINE && strcmp(f->name, "STACK_SIZE") == 0) {
            int64_t v;
            if (nopi_stack_size_parse(f->value, "STACK_SIZE", &v, why, sizeof why) != 0)
                return nopi_y_error(L->doc, items[i], L->err, "%s", why);
            if (set_stack(L, items[i], v, NOP_STACK_CFLAGS) != 0)
                return -1;
        }
    }
    return 0;
}

/* The glue's own symbols start with nt__, and its descriptor is neuronop_library: a user
 * function of such a name would meet them at link time. */
int nopi_manifest_glue_name(loader *L, const nopi_ynode *at, const char *name)
{
    nopi_y_error(L->doc, at, L->err, "function name '%s' is reserved: names starting with "
                 "'nt__', and 'neuronop_library', are neuronop's own", name);
    nopi_detail(L->err, "rename the function, for example to 'my_%s'",
                strncmp(name, "nt__", 4) == 0 ? name + 4 : name);
    return -1;
}

static int load_function_name(loader *L, const nopi_ynode *op, const char *opname,
                              const char *key, char **out, nopi_pos *pos)
{
    const nopi_ynode *n = nopi_y_lookup(op, key);
    if (!n) {
        nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, op->line, op->col,
                  "op '%s' is missing required key '%s'", opname, key);
        /* the names neuronop new and the examples give (a new user's find: the kernel was
         * suggested as OP_kernel, which no example names so) */
        bool shape = strcmp(key, "shape") == 0;
        nopi_detail(L->err, "add '%s: %s%s' naming its C function in %s", key, opname,
                    shape ? "_shape" : "", shape ? "shape_srcs" : "compute_srcs");
        return -1;
    }
    const char *s;
    if (nopi_y_string(L->doc, n, key, &s, L->err) != 0)
        return -1;
    if (!nopi_is_identifier(s))
        return nopi_y_error(L->doc, n, L->err, "'%s' of op '%s' must name a C function, "
                            "not '%s'", key, opname, s);
    if (nopi_is_glue_name(s))
        return nopi_manifest_glue_name(L, n, s);
    *out = strdup(s);
    *pos = pos_of(n);
    return *out ? 0 : oom(L);
}

static int load_args(loader *L, nopi_op *op, const nopi_ynode *opnode)
{
    const nopi_ynode *n = nopi_y_lookup(opnode, "args");
    if (!n) {
        nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, opnode->line, opnode->col,
                  "op '%s' is missing required key 'args'", op->name);
        nopi_detail(L->err, "add 'args: [tensor]' listing the argument types in order "
                    "(tensor, scalar, double, int64)");
        return -1;
    }
    const nopi_ynode **items;
    size_t nitems;
    if (nopi_y_strings(L->doc, n, "args", &items, &nitems, L->err) != 0)
        return -1;
    if (nitems > NOP_MAX_ARGS)
        return nopi_y_error(L->doc, n, L->err, "op '%s' has %zu args; at most %d are "
                            "supported", op->name, nitems, NOP_MAX_ARGS);
    for (size_t i = 0; i < nitems; i++) {
        int t = -1;
        for (int k = 0; k < 4; k++)
            if (strcmp(items[i]->str, nopi_argtype_names[k]) == 0)
                t = k;
        if (t < 0) {
            const char *hint = nopi_closest(items[i]->str, nopi_argtype_names, 4);
            if (strcmp(items[i]->str, "float") == 0 || strcmp(items[i]->str, "int") == 0)
                hint = strcmp(items[i]->str, "float") == 0 ? "double" : "int64";
            nopi_y_error(L->doc, items[i], L->err, "unknown arg type '%s'%s%s%s",
                         items[i]->str, hint ? "; did you mean '" : "", hint ? hint : "",
                         hint ? "'?" : "");
            nopi_detail(L->err, "arg types are tensor, scalar, double and int64 (the device "
                        "has no float, int, array or tuple arguments)");
            return -1;
        }
        op->args[i] = (enum nop_argtype)t;
    }
    op->nargs = (int)nitems;
    return 0;
}

static void args_text(const nopi_op *op, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < op->nargs && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? ", " : "",
                                 nopi_argtype_names[op->args[k]]);
}

/* Ops may share a kernel or a shape function only if they give it the same args: the
 * prelude declares each function with its op's signature, and C allows one. */
static int check_shared_function(loader *L, int i, bool shape)
{
    const nopi_op *op = &L->m->ops[i];
    const char *fname = shape ? op->shape : op->kernel;
    for (int j = 0; j < i; j++) {
        const nopi_op *other = &L->m->ops[j];
        if (strcmp(fname, shape ? other->shape : other->kernel) != 0 ||
            (other->nargs == op->nargs &&
             memcmp(other->args, op->args, (size_t)op->nargs * sizeof op->args[0]) == 0))
            continue;
        char mine[160], theirs[160];
        args_text(op, mine, sizeof mine);
        args_text(other, theirs, sizeof theirs);
        nopi_pos at = shape ? op->shape_pos : op->kernel_pos;
        nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, at.line, at.col, "%s function '%s' of "
                  "op '%s' would take [%s], but op '%s' (line %d) gives it [%s]",
                  shape ? "shape" : "kernel", fname, op->name, mine, other->name,
                  other->pos.line, theirs);
        nopi_detail(L->err, "a C function has one signature: give op '%s' a %s function of "
                    "its own", op->name, shape ? "shape" : "kernel");
        return -1;
    }
    return 0;
}

static int load_ops(loader *L, const nopi_ynode *ops)
{
    if (nopi_y_expect(L->doc, ops, NOPI_Y_MAP, "ops", L->err) != 0) {
        L->err->diag.detail[0] = '\0';   /* an example says it better than the generic hint */
        nopi_detail(L->err, "write each op as a mapping under ops, e.g.\n"
                    "ops:\n  relu_forward:\n    args: [tensor]\n    shape: relu_fwd_shape\n"
                    "    kernel: relu_forward");
        return -1;
    }
    if (ops->n == 0)
        return nopi_y_error(L->doc, ops, L->err, "'ops' is empty; declare at least one op");
    for (size_t i = 0; i < ops->n; i++) {
        const nopi_ynode *key = nopi_y_key(ops, i), *val = nopi_y_value(ops, i);
        if (key->kind != NOPI_Y_SCALAR || !nopi_is_identifier(key->str))
            return nopi_y_error(L->doc, key, L->err, "op name '%s' is not a C identifier",
                                key->kind == NOPI_Y_SCALAR ? key->str : "?");
        for (size_t j = 0; j < i; j++) {
            if (strcmp(nopi_y_key(ops, j)->str, key->str) == 0) {
                nopi_y_error(L->doc, key, L->err, "duplicate op '%s'", key->str);
                nopi_detail(L->err, "first declared at line %d; give each op its own name",
                            nopi_y_key(ops, j)->line);
                return -1;
            }
        }
        if (i >= NOP_MAX_OPS) {
            nopi_y_error(L->doc, key, L->err, "more than %d ops: the device registers at most "
                         "%d ops per library", NOP_MAX_OPS, NOP_MAX_OPS);
            nopi_detail(L->err, "split the ops into two libraries");
            return -1;
        }
        nopi_op *op = &L->m->ops[i];
        op->name = strdup(key->str);
        op->pos = pos_of(key);
        L->m->nops = (int)i + 1;
        if (!op->name)
            return oom(L);
        char what[160];
        snprintf(what, sizeof what, "op '%s'", op->name);
        if (nopi_y_expect(L->doc, val, NOPI_Y_MAP, op->name, L->err) != 0 ||
            nopi_y_check_keys(L->doc, val, op_keys, what, L->err) != 0 ||
            load_args(L, op, val) != 0 ||
            load_function_name(L, val, op->name, "shape", &op->shape, &op->shape_pos) != 0 ||
            load_function_name(L, val, op->name, "kernel", &op->kernel, &op->kernel_pos) != 0 ||
            check_shared_function(L, (int)i, true) != 0 ||
            check_shared_function(L, (int)i, false) != 0)
            return -1;
    }
    return 0;
}

/* True when a shape source is C++, whose NEURON_LIBRARY may give the ops. */
static bool has_cxx_shape(const nop_manifest *m)
{
    for (int i = 0; i < m->nshape; i++)
        if (nopi_is_cxx_source(m->shape[i].path))
            return true;
    return false;
}

/* Whether a manifest's cxx: names a C++ compiler to look up on PATH: g++, c++ or clang++,
 * with a target prefix or a version suffix (x86_64-linux-gnu-g++-12, clang++-16).  The
 * manifest comes with the sources, which may be hostile: a path would let it run a script
 * of its own as the compiler (Landlock refuses to execute it, but not every kernel has
 * Landlock), and any other program would run with arguments meant for a compiler.  The
 * environment's CXX, which the user sets, may name anything. */
static bool is_cxx_compiler_name(const char *s)
{
    regex_t re;
    if (regcomp(&re, "^([A-Za-z0-9_.]+-)*(g|c|clang)\\+\\+(-[0-9]+(\\.[0-9]+)*)?$",
                REG_EXTENDED | REG_NOSUB) != 0)
        return false;
    bool ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* compiler: tcc | cc, and cxx: PROGRAM. */
static int load_compiler(loader *L, const nopi_ynode *root)
{
    const nopi_ynode *n;
    const char *s;
    if ((n = nopi_y_lookup(root, "compiler"))) {
        if (nopi_y_string(L->doc, n, "compiler", &s, L->err) != 0)
            return -1;
        if (strcmp(s, "cc") != 0 && strcmp(s, "tcc") != 0)
            return nopi_y_error(L->doc, n, L->err, "'compiler' is 'tcc' (the embedded "
                                "compiler, the default) or 'cc' (the system C compiler at "
                                "-O2), not '%s'", s);
        L->m->compiler_cc = strcmp(s, "cc") == 0;
    }
    if ((n = nopi_y_lookup(root, "cxx"))) {
        if (nopi_y_string(L->doc, n, "cxx", &s, L->err) != 0)
            return -1;
        if (!is_cxx_compiler_name(s)) {
            nopi_y_error(L->doc, n, L->err, "'cxx' names a C++ compiler on PATH (g++, c++ or "
                         "clang++, such as clang++-16), not '%s'", s);
            nopi_detail(L->err, "to build with another program, set CXX in the environment "
                        "instead");
            return -1;
        }
        if (!(L->m->cxx = strdup(s)))
            return oom(L);
    }
    return 0;
}

static int load(loader *L)
{
    const nopi_ynode *root = nopi_yaml_root(L->doc);
    if (!root)
        return nopi_fail(L->err, NOP_ERR_INPUT, L->m->path, 1, 1, "the manifest is empty; "
                         "see neuronop.yaml(5) for its keys");
    if (root->kind != NOPI_Y_MAP)
        return nopi_y_error(L->doc, root, L->err, "the manifest must be a mapping of keys "
                            "(name, compute_srcs, shape_srcs, ops, ...)");
    if (nopi_y_check_keys(L->doc, root, top_keys, "manifest", L->err) != 0 ||
        require(L, root, "name", "name: my_ops") != 0 ||
        require(L, root, "compute_srcs", "compute_srcs: [kernel.c]") != 0 ||
        require(L, root, "shape_srcs", "shape_srcs: [shape.c]") != 0)
        return -1;

    nop_manifest *m = L->m;
    m->stack_size = NOP_STACK_DEFAULT_BYTES;
    m->stack_from = NOP_STACK_DEFAULT;
    const nopi_ynode *n;
    if (load_name(L, nopi_y_lookup(root, "name")) != 0)
        return -1;
    if (load_sources(L, nopi_y_lookup(root, "compute_srcs"), "compute_srcs", &m->compute,
                     &m->ncompute) != 0)
        return -1;
    if (m->ncompute == 0)
        return nopi_y_error(L->doc, nopi_y_lookup(root, "compute_srcs"), L->err,
                            "'compute_srcs' is empty; list the C files with the kernels");
    if (load_sources(L, nopi_y_lookup(root, "shape_srcs"), "shape_srcs", &m->shape,
                     &m->nshape) != 0)
        return -1;
    for (int i = 0; i < m->nshape; i++)
        for (int j = 0; j < m->ncompute; j++)
            if (same_file(&m->shape[i], &m->compute[j])) {
                const nopi_src *at = second(&m->shape[i], &m->compute[j]);
                nopi_fail(L->err, NOP_ERR_INPUT, m->path, at->pos.line, at->pos.col, "'%s' is in "
                          "both compute_srcs and shape_srcs: kernels run on the device and "
                          "shape functions on the host, so keep them in separate files",
                          at->path);
                return same_file_detail(L->err, &m->shape[i], &m->compute[j]);
            }
    if ((n = nopi_y_lookup(root, "reference_srcs"))) {
        if (load_sources(L, n, "reference_srcs", &m->reference, &m->nreference) != 0)
            return -1;
        for (int i = 0; i < m->nreference; i++)
            for (int j = 0; j < m->ncompute + m->nshape; j++) {
                const nopi_src *o = j < m->ncompute ? &m->compute[j] : &m->shape[j - m->ncompute];
                if (!same_file(&m->reference[i], o))
                    continue;
                const nopi_src *at = second(&m->reference[i], o);
                nopi_fail(L->err, NOP_ERR_INPUT, m->path, at->pos.line, at->pos.col, "'%s' is a "
                          "reference source and a %s source; keep reference functions in files "
                          "of their own", at->path, j < m->ncompute ? "compute" : "shape");
                return same_file_detail(L->err, &m->reference[i], o);
            }
    }
    const char *bdir = "build";
    if ((n = nopi_y_lookup(root, "build_directory")) &&
        nopi_y_string(L->doc, n, "build_directory", &bdir, L->err) != 0)
        return -1;
    m->build_dir_given = n != NULL;
    m->build_dir_pos = n ? pos_of(n) : (nopi_pos){ 1, 1 };
    if (!(m->build_dir = nopi_path_join(m->dir, bdir)) || !(m->build_dir_text = strdup(bdir)))
        return oom(L);
    if ((n = nopi_y_lookup(root, "multicore")) &&
        nopi_y_bool(L->doc, n, "multicore", &m->multicore, L->err) != 0)
        return -1;
    if ((n = nopi_y_lookup(root, "verbose")) &&
        nopi_y_bool(L->doc, n, "verbose", &m->verbose, L->err) != 0)
        return -1;
    if ((n = nopi_y_lookup(root, "extra_include_paths")) && load_include_paths(L, n) != 0)
        return -1;
    if ((n = nopi_y_lookup(root, "stack_size"))) {
        int64_t v;
        char why[256];
        if (n->kind != NOPI_Y_SCALAR || !n->plain ||
            nopi_stack_size_parse(n->str, "'stack_size'", &v, why, sizeof why) != 0) {
            if (n->kind == NOPI_Y_SCALAR && n->plain)
                return nopi_y_error(L->doc, n, L->err, "%s", why);
            return nopi_y_error(L->doc, n, L->err, "'stack_size' must be a whole number of "
                                "bytes, 1..%d", NOP_STACK_MAX_BYTES);
        }
        if (set_stack(L, n, v, NOP_STACK_KEY) != 0)
            return -1;
    }
    if ((n = nopi_y_lookup(root, "extra_cflags")) && load_cflags(L, n) != 0)
        return -1;
    if (load_compiler(L, root) != 0)
        return -1;
    if ((n = nopi_y_lookup(root, "ops"))) {
        m->ops_given = true;
        for (size_t i = 0; i < root->n; i++)
            if (strcmp(nopi_y_key(root, i)->str, "ops") == 0)
                m->ops_pos = pos_of(nopi_y_key(root, i));
        if (load_ops(L, n) != 0)
            return -1;
    } else if (!has_cxx_shape(m)) {
        return require(L, root, "ops", "ops: {my_op: {args: [tensor], shape: my_shape, "
                       "kernel: my_kernel}}");
    }
    return (n = nopi_y_lookup(root, "tests")) ? nopi_manifest_load_tests(L, n) : 0;
}

/* What a file given where a manifest goes is when it is plainly something else (a built
 * library, a source), for saying so rather than reporting its first byte as bad YAML; NULL
 * when it may be a manifest. */
static const char *not_a_manifest(const char *path)
{
    FILE *f = fopen(path, "rb");
    char magic[4] = { 0 };
    bool elf = f && fread(magic, 1, sizeof magic, f) == sizeof magic &&
               memcmp(magic, "\177ELF", 4) == 0;
    if (f)
        fclose(f);
    const char *dot = strrchr(path, '.');
    if (elf)
        return "a built library (a shared object)";
    if (nopi_is_cxx_source(path) || (dot && (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0 ||
                                             strcmp(dot, ".hpp") == 0)))
        return "a source file";
    if (dot && strcmp(dot, ".npy") == 0)
        return "a tensor (.npy)";
    return NULL;
}

int nop_manifest_load(nop_manifest **out, const char *path, nop_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot find '%s': %s", path, strerror(e));
        /* the library's name, given in its own folder, as its README says from above it (a
         * new user's find) */
        char cwd[4096];
        const char *base;
        bool here = e == ENOENT && !strchr(path, '/') && stat("neuronop.yaml", &st) == 0;
        if (here && getcwd(cwd, sizeof cwd) && (base = strrchr(cwd, '/')) &&
            strcmp(base + 1, path) == 0)
            nopi_detail(err, "you are in '%s' already: give '.', or nothing where the command "
                        "takes the folder it runs in", path);
        else if (here && !strchr(path, '.'))   /* run OP ..., in the library's folder (a new
                                                * user's find) */
            nopi_detail(err, "an op's name? give the library first, '.' for this folder's: "
                        ". %s ...", path);
        return -1;
    }
    nop_manifest *m = calloc(1, sizeof *m);
    if (!m)
        return nopi_nomem(err);
    m->path = S_ISDIR(st.st_mode) ? nopi_path_join(path, "neuronop.yaml") : strdup(path);
    if (!m->path || !(m->dir = nopi_dirname(m->path))) {
        nop_manifest_free(m);
        return nopi_nomem(err);
    }
    if (S_ISDIR(st.st_mode) && stat(m->path, &st) != 0) {
        if (errno == ENOENT) {
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no neuronop.yaml in '%s'", path);
            nopi_detail(err, "give the manifest's path, or run in the folder that has it");
        } else {   /* a folder it may not read (a docs audit's find: "no neuronop.yaml") */
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read '%s': %s", m->path,
                      strerror(errno));
        }
        nop_manifest_free(m);
        return -1;
    }
    /* only a regular file is opened to look: a FIFO would wait for a writer (the YAML
     * reader refuses anything else by what it is) */
    const char *other = S_ISREG(st.st_mode) ? not_a_manifest(path) : NULL;
    if (other) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is %s, not a manifest", path, other);
        nopi_detail(err, "give the library's folder or its neuronop.yaml");
        nop_manifest_free(m);
        return -1;
    }
    loader L = { NULL, m, err };
    int rc = nopi_yaml_load(&L.doc, m->path, err);
    if (rc == 0)
        rc = load(&L);
    nopi_yaml_free(L.doc);
    if (rc != 0) {
        nop_manifest_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

static void free_srcs(nopi_src *s, int n)
{
    for (int i = 0; i < n; i++) {
        free(s[i].path);
        free(s[i].resolved);
        free(s[i].real);
    }
    free(s);
}

void nop_manifest_free(nop_manifest *m)
{
    if (!m)
        return;
    free(m->path);
    free(m->dir);
    free(m->name);
    free_srcs(m->compute, m->ncompute);
    free_srcs(m->shape, m->nshape);
    free_srcs(m->includes, m->nincludes);
    free_srcs(m->reference, m->nreference);
    free(m->build_dir);
    free(m->build_dir_text);
    for (int i = 0; i < m->nflags; i++)
        nopi_flag_clear(&m->flags[i]);
    free(m->flags);
    for (int i = 0; i < m->nops; i++) {
        free(m->ops[i].name);
        free(m->ops[i].shape);
        free(m->ops[i].kernel);
    }
    for (int i = 0; i < m->ntests; i++) {
        nopi_test *t = &m->tests[i];
        free(t->name);
        free(t->opname);
        free(t->expect);
        free(t->reference);
        for (int a = 0; a < NOP_MAX_ARGS; a++) {
            for (int k = 0; t->alts[a] && k < t->nalts[a]; k++)
                free(t->alts[a][k]);
            free(t->alts[a]);
        }
    }
    free(m->tests);
    free(m->cxx);
    free(m);
}

const char *nop_manifest_path(const nop_manifest *m) { return m->path; }
const char *nop_manifest_name(const nop_manifest *m) { return m->name; }
const char *nop_manifest_build_dir(const nop_manifest *m) { return m->build_dir; }
bool nop_manifest_multicore(const nop_manifest *m) { return m->multicore; }
int64_t nop_manifest_stack_size(const nop_manifest *m) { return m->stack_size; }
enum nop_stack_from nop_manifest_stack_from(const nop_manifest *m) { return m->stack_from; }
int nop_manifest_op_count(const nop_manifest *m) { return m->nops; }
int nop_manifest_op(const nop_manifest *m, int i, nop_opinfo *out)
{
    if (i < 0 || i >= m->nops)
        return -1;
    const nopi_op *op = &m->ops[i];
    out->name = op->name;
    out->kernel = op->kernel;
    out->shape = op->shape;
    out->nargs = op->nargs;
    memcpy(out->args, op->args, sizeof out->args);
    return 0;
}


int nop_manifest_test_count(const nop_manifest *m) { return m->ntests; }

int nop_manifest_test(const nop_manifest *m, int i, nop_testinfo *out)
{
    if (i < 0 || i >= m->ntests)
        return -1;
    const nopi_test *t = &m->tests[i];
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->op = t->op >= 0 ? m->ops[t->op].name : t->opname;
    out->nargs = t->nargs;
    for (int a = 0; a < t->nargs; a++) {
        out->alts[a] = (const char *const *)t->alts[a];
        out->nalts[a] = t->nalts[a];
    }
    out->expect = t->expect;
    out->reference = t->reference;
    out->rtol = t->rtol;
    out->atol = t->atol;
    out->cores = t->cores;
    out->ncores = t->ncores;
    out->line = t->pos.line;
    return 0;
}

int nopi_build_dir_check(const nop_manifest *m, nop_error *err)
{
    char resolved[2048], also[2100] = "";
    if (nopi_confine_within(m->dir, m->build_dir, resolved, sizeof resolved))
        return 0;
    if (strcmp(resolved, m->build_dir_text) != 0)
        snprintf(also, sizeof also, " (it resolves to '%s')", resolved);
    if (m->build_dir_given)
        nopi_fail(err, NOP_ERR_INPUT, m->path, m->build_dir_pos.line, m->build_dir_pos.col,
                  "build_directory '%s' is outside the library folder%s", m->build_dir_text,
                  also);
    else
        nopi_fail(err, NOP_ERR_INPUT, m->path, 1, 1, "the build folder '%s' is outside the "
                  "library folder%s", m->build_dir_text, also);
    nopi_detail(err, "a manifest builds inside its own folder: name a folder in it (such as "
                "'build', not a link elsewhere), or choose one on the command line with "
                "'neuronop build --build-dir DIR'");
    return -1;
}

/* A build reads only the library folder (and the toolchain's headers): a source or include
 * folder that resolves elsewhere, through "..", an absolute path or a symlink, is refused, so
 * that nothing of a file outside reaches a compiler's message in a CI log. */
static int outside(const nop_manifest *m, const char *root, nopi_pos pos, const char *what,
                   const char *written, const char *path, nop_error *err)
{
    char resolved[2048], also[2100] = "";
    if (nopi_confine_within(root, path, resolved, sizeof resolved))
        return 0;
    bool folder = strcmp(what, "include folder") == 0;
    /* the system's public headers may be named as include folders (/usr/include/eigen3) */
    if (folder && (nopi_confine_within("/usr/include", path, NULL, 0) ||
                   nopi_confine_within("/usr/local/include", path, NULL, 0)))
        return 0;
    if (strcmp(written, resolved) != 0)
        snprintf(also, sizeof also, " (it resolves to '%s')", resolved);
    nopi_fail(err, NOP_ERR_INPUT, m->path, pos.line, pos.col, "%s '%s' is outside the %s%s",
              what, written, root == m->dir ? "library folder" : "folder given with "
              "--library-dir", also);
    nopi_detail(err, "a build reads only files inside the folder of neuronop.yaml%s; copy "
                "what it needs there", folder ? " (and the system's /usr/include)" : "");
    return -1;
}

int nopi_manifest_check_paths(const nop_manifest *m, const char *library_dir, nop_error *err)
{
    const char *root = library_dir ? library_dir : m->dir;
    const nopi_src *lists[] = { m->compute, m->shape, m->reference };
    const int counts[] = { m->ncompute, m->nshape, m->nreference };
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < counts[l]; i++)
            if (outside(m, root, lists[l][i].pos, "source file", lists[l][i].path,
                        lists[l][i].resolved, err) != 0)
                return -1;
    for (int i = 0; i < m->nincludes; i++)
        if (outside(m, root, m->includes[i].pos, "include folder", m->includes[i].path,
                    m->includes[i].resolved, err) != 0)
            return -1;
    for (int i = 0; i < m->nflags; i++)
        if (m->flags[i].kind == NOPI_FLAG_INCLUDE &&
            outside(m, root, m->flags[i].pos, "include folder", m->flags[i].text + 2,
                    m->flags[i].value, err) != 0)
            return -1;
    return 0;
}
