/*
 * resolve.c - finds the symbol of each op's C++ kernel and shape function, and of each
 * test's C++ reference function, by reading the mangled names the objects define
 * (see builder.h, mangle.h).
 *
 * A C++ function is found by its unqualified name; its parameters must be the op's argument
 * kinds, each by value or const reference.  One with the right name and other parameters is
 * a signature mismatch that names both lists; a name that no object defines is left to
 * check.c, which says so with the closest name there is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "base/mangle.h"

void nopi_op_where(const builder *b, int op, nopi_role role, const char **file,
                   nopi_pos *pos)
{
    const nopi_op *o = &b->m->ops[op];
    if (b->reg_ops && b->reg_file[op]) {
        *file = b->reg_file[op];
        pos->line = b->reg_line[op];
        pos->col = 0;
        char text[1024], quoted[300];
        snprintf(quoted, sizeof quoted, "\"%s\"", role == NOPI_ROLE_COMPUTE ? o->kernel
                                                                            : o->name);
        if (nopi_read_line(*file, pos->line, text, sizeof text) == 0 && strstr(text, quoted))
            pos->col = (int)(strstr(text, quoted) - text) + 1;
        return;
    }
    *file = b->m->path;
    *pos = role == NOPI_ROLE_COMPUTE ? o->kernel_pos : role == NOPI_ROLE_SHAPE ? o->shape_pos
                                                                               : o->pos;
}

static bool kinds_match(const nopi_cxxfn *fn, const nopi_op *op)
{
    if (fn->nparams != op->nargs)
        return false;
    for (int i = 0; i < op->nargs; i++)
        if (fn->params[i].kind != (int)op->args[i])
            return false;
    return true;
}

/* Looks for fname among the C++ objects of `role`: fills out on a match; -1 with an error
 * on a function of that name with other parameters; 0 with out->sym NULL when there is
 * none (or it is a C function). */
static int find(builder *b, const object *objs, int nobjs, nopi_role role, const char *fname,
                const nopi_op *op, nopi_gen_fn *out, const nopi_cxxfn **mismatch,
                nopi_cxxfn *buf)
{
    *mismatch = NULL;
    for (int j = 0; j < nobjs; j++) {
        if (objs[j].role != role || objs[j].lang != NOPI_LANG_CXX)
            continue;
        for (size_t k = 0; k < objs[j].nsyms; k++) {
            const nopi_elfsym *s = &objs[j].syms[k];
            if (!s->defined || !s->function || strncmp(s->name, "_Z", 2) != 0)
                continue;
            nopi_cxxfn fn;
            if (!nopi_cxx_read(s->name, &fn) || strcmp(fn.name, fname) != 0)
                continue;
            if (kinds_match(&fn, op)) {
                if (!(out->sym = strdup(s->name)))
                    return nopi_nomem(b->err);
                for (int i = 0; i < op->nargs; i++)
                    out->byref[i] = fn.params[i].byref;
                return 0;
            }
            *buf = fn;
            *mismatch = buf;
        }
    }
    return 0;
}

static int mismatch_error(builder *b, int i, nopi_role role, const nopi_cxxfn *fn)
{
    const nopi_op *op = &b->m->ops[i];
    const char *file;
    nopi_pos pos;
    nopi_op_where(b, i, role, &file, &pos);
    int kinds[NOP_MAX_ARGS];
    for (int k = 0; k < op->nargs; k++)
        kinds[k] = (int)op->args[k];
    char want[600];
    const char *other = role == NOPI_ROLE_COMPUTE ? op->shape : op->kernel;
    nopi_cxx_signature(other, op->nargs, kinds, b->fns[i][1].byref, want, sizeof want);
    nopi_fail(b->err, NOP_ERR_COMPILE, file, pos.line, pos.col, "op '%s': %s '%s' and %s "
              "'%s' take different parameters", op->name,
              role == NOPI_ROLE_COMPUTE ? "kernel" : "shape function", fn->name,
              role == NOPI_ROLE_COMPUTE ? "shape function" : "kernel", other);
    const char *l1 = role == NOPI_ROLE_COMPUTE ? "the shape function is" : "the op's args give";
    const char *l2 = role == NOPI_ROLE_COMPUTE ? "the kernel is" : "the shape function is";
    int w = (int)(strlen(l1) > strlen(l2) ? strlen(l1) : strlen(l2));
    nopi_detail(b->err, "%-*s %s\n%-*s %s", w, l1, want, w, l2, fn->display);
    nopi_detail(b->err, "a kernel takes exactly its shape function's parameters (torch::Tensor,"
                " torch::Scalar, double, int64_t, each by value or const reference)");
    return -1;
}

int nopi_build_resolve(builder *b, const object *objs, int nobjs)
{
    nopi_cxxfn buf;
    const nopi_cxxfn *bad;
    for (int i = 0; i < b->m->nops; i++) {
        const nopi_op *op = &b->m->ops[i];
        /* the shape first: a kernel's parameters are compared with it */
        for (int r = 1; r >= 0; r--) {
            nopi_role role = r == 0 ? NOPI_ROLE_COMPUTE : NOPI_ROLE_SHAPE;
            if (b->fns[i][r].sym)
                continue;   /* the registration gave it */
            if (find(b, objs, nobjs, role, r == 0 ? op->kernel : op->shape, op, &b->fns[i][r],
                     &bad, &buf) != 0)
                return -1;
            if (!b->fns[i][r].sym && bad)
                return mismatch_error(b, i, role, bad);
        }
    }
    const nopi_test *tests = b->m->tests;
    if (b->m->ntests && !(b->refs = calloc((size_t)b->m->ntests, sizeof *b->refs)))
        return nopi_nomem(b->err);
    for (int t = 0; t < b->m->ntests; t++) {
        if (!tests[t].reference)
            continue;
        const nopi_op *op = &b->m->ops[tests[t].op];
        if (find(b, objs, nobjs, NOPI_ROLE_REFERENCE, tests[t].reference, op, &b->refs[t],
                 &bad, &buf) != 0)
            return -1;
        if (!b->refs[t].sym && bad) {
            char want[600];
            int kinds[NOP_MAX_ARGS];
            for (int k = 0; k < op->nargs; k++)
                kinds[k] = (int)op->args[k];
            nopi_cxx_signature(tests[t].reference, op->nargs, kinds, NULL, want, sizeof want);
            nopi_fail(b->err, NOP_ERR_COMPILE, b->m->path, tests[t].reference_pos.line,
                      tests[t].reference_pos.col, "reference function '%s' of test '%s' takes "
                      "other parameters than op '%s'", tests[t].reference, tests[t].name,
                      op->name);
            nopi_detail(b->err, "it is %s\nit must be %s", bad->display, want);
            return -1;
        }
    }
    return 0;
}
