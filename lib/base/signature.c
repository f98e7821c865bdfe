/*
 * signature.c - the names of argument types and the one way an op's signature is written,
 * "relu_forward(tensor, scalar)": in manifests, build messages, run errors and JSON alike.
 */
#include <stdio.h>

#include "internal.h"

const char *const nopi_argtype_names[4] = { "tensor", "scalar", "double", "int64" };

const char *nop_argtype_name(enum nop_argtype t)
{
    return (unsigned)t < 4 ? nopi_argtype_names[t] : "?";
}

const char *nopi_argtype_article(int t)
{
    return t == NOP_ARG_INT64 ? "an" : "a";
}

void nopi_signature(const char *name, const int *types, int n, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s(", name);
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                                 nop_argtype_name((enum nop_argtype)types[i]));
    if (used < size)
        snprintf(buf + used, size - used, ")");
}

void nop_signature(const nop_opinfo *op, char *buf, size_t size)
{
    int types[NOP_MAX_ARGS];
    for (int i = 0; i < op->nargs && i < NOP_MAX_ARGS; i++)
        types[i] = (int)op->args[i];
    nopi_signature(op->name, types, op->nargs, buf, size);
}

void nopi_signature_detail(const char *name, const int *types, int n, nop_error *err)
{
    char sig[512];
    nopi_signature(name, types, n, sig, sizeof sig);
    nopi_detail(err, "signature: %s", sig);
}

int nopi_check_nargs(const char *name, const int *types, int n, int given, nop_error *err)
{
    if (given == n)
        return 0;
    nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "op '%s' takes %d argument%s, %d given", name, n,
              n == 1 ? "" : "s", given);
    nopi_signature_detail(name, types, n, err);
    return -1;
}
