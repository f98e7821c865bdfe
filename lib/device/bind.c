/*
 * bind.c - a caller's op values turned into what kernels and shape functions receive: read-only
 * views of the input tensors (shape-only for shape functions), scalars and numbers, checked
 * against the op's signature.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* A read-only view of a caller's tensor, sharing its data; shape_only for shape functions. */
static nt_tensor *view(const nt_tensor *t, bool shape_only)
{
    nt_tensor *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    *v = *t;
    v->readonly = true;
    v->shape_only = shape_only;
    v->coherence = NT_COHERENT;
    v->track = NULL;
    v->next = NULL;
    if (shape_only)
        v->data = NULL;
    return v;
}

void nopi_free_views(nt__arg *args, const nt__op_desc *op)
{
    for (int i = 0; i < op->nargs; i++) {
        if (op->argtypes[i] == NT_ARG_TENSOR && args[i].t) {
            nt_tensor *v = (nt_tensor *)args[i].t;
            free(v->track);
            v->magic = 0;
            free(v);
        }
    }
}

/* Fills kernel and shape argument arrays; -1 with a usage error when args do not fit. */
int nopi_bind_args(const nt__op_desc *op, const nop_value *args, int nargs, nt__arg *kargs,
                   nt__arg *sargs, nop_error *err)
{
    if (nopi_check_nargs(op->name, op->argtypes, op->nargs, nargs, err) != 0)
        return -1;
    for (int i = 0; i < nargs; i++) {
        int want = op->argtypes[i];
        if ((int)args[i].type != want) {
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "argument %d of op '%s' must be %s %s, "
                      "not %s %s", i + 1, op->name, nopi_argtype_article(want),
                      nop_argtype_name(want), nopi_argtype_article(args[i].type),
                      nop_argtype_name(args[i].type));
            nopi_signature_detail(op->name, op->argtypes, op->nargs, err);
            return -1;
        }
        switch (want) {
        case NT_ARG_TENSOR:
            if (!(kargs[i].t = view(args[i].tensor, false)) ||
                !(sargs[i].t = view(args[i].tensor, true)))
                return nopi_nomem(err);
            break;
        case NT_ARG_SCALAR: {
            nt_scalar s = args[i].is_int ? nt_scalar_i(args[i].i) : nt_scalar_f(args[i].d);
            s.is_bool = args[i].is_int && args[i].is_bool;
            memcpy(&kargs[i].s, &s, sizeof s);
            sargs[i].s = kargs[i].s;
            break;
        }
        case NT_ARG_DOUBLE:
            kargs[i].d = sargs[i].d = args[i].d;
            break;
        default:
            kargs[i].i = sargs[i].i = args[i].i;
            break;
        }
    }
    return 0;
}
