/*
 * values.c - op arguments from strings, as the command line and a manifest's tests write
 * them: a number for scalar, double and int64; a .npy file or a generator for a tensor.
 *
 * The one place that checks arguments against an op's signature before a run, so `neuronop
 * run`, `bench` and `test` word every mistake alike (device.c checks again, for callers that
 * build values themselves, with the same messages from signature.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "library.h"

/* An input error about argument i, with the op's signature under it. */
static int bad_arg(const nop_opinfo *op, int i, const char *arg, const char *what,
                   nop_error *err)
{
    nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "argument %d of op '%s' is %s %s: '%s' %s",
              i + 1, op->name, nopi_argtype_article(op->args[i]),
              nop_argtype_name(op->args[i]), arg, what);
    char sig[512];
    nop_signature(op, sig, sizeof sig);
    nopi_detail(err, "signature: %s", sig);
    return -1;
}

/* An input error for an op the library does not have, with its closest name and the ops.
 * A C++ library's ops are named with its namespace (NEURON_LIBRARY(ns, m): "ns::op"), in the
 * hint and the list, and a name given with a namespace is matched by the part after it, so
 * a mistyped op or a wrong namespace both get the name that works. */
static int no_such_op(const nop_library *lib, const char *opname, nop_error *err)
{
    int n = nop_library_op_count(lib);
    if (n > NOP_MAX_OPS)
        n = NOP_MAX_OPS;
    const char *ns = nop_library_namespace(lib), *sep = ns ? "::" : "";
    if (!ns)
        ns = "";
    const char *given = strstr(opname, "::");
    const char *bare = given ? given + 2 : opname;
    const char *names[NOP_MAX_OPS];
    for (int i = 0; i < n; i++) {
        nop_opinfo o;
        nop_library_op(lib, i, &o);
        names[i] = o.name;
    }
    const char *hint = nop_closest(bare, names, (size_t)n);
    if (hint)
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no op '%s' in library '%s'; did you mean "
                  "'%s%s%s'?", opname, nop_library_name(lib), ns, sep, hint);
    else
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no op '%s' in library '%s'", opname,
                  nop_library_name(lib));
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, "its ops:");
    for (int i = 0; i < n; i++) {
        nop_opinfo o;
        char sig[512];
        nop_library_op(lib, i, &o);
        nop_signature(&o, sig, sizeof sig);
        nopi_sb_printf(&sb, " %s%s%s", ns, sep, sig);
    }
    nopi_detail(err, "%s", sb.s ? sb.s : "");
    nopi_sb_free(&sb);
    return -1;
}

/* Parses one non-tensor argument into v. */
static int parse_number(const nop_opinfo *op, int i, const char *a, nop_value *v,
                        nop_error *err)
{
    /* as Python's int() and float() read the text a caller would pass the op: decimal (010
     * is ten, not C's octal eight; no hexadecimal), a whole number int64 cannot hold refused
     * as torch refuses it ("Overflow when unpacking long"), and a real one that is subnormal
     * or past double's range read as strtod reads it (1e-310, 1e400: inf) */
    if (op->args[i] == NOP_ARG_SCALAR && (strcmp(a, "True") == 0 || strcmp(a, "False") == 0)) {
        v->i = a[0] == 'T';   /* a bool Scalar, as c10 keeps one */
        v->is_int = v->is_bool = true;
        return 0;
    }
    nopi_number num;
    bool number = nopi_number_read(a, &num);
    if (op->args[i] != NOP_ARG_DOUBLE) {   /* int64, or a scalar that may be whole */
        if (num.past_int64)
            return bad_arg(op, i, a, "is a whole number outside int64", err);
        if (num.whole) {
            v->i = num.n;
            v->is_int = true;
            return 0;
        }
        if (op->args[i] == NOP_ARG_INT64)
            return bad_arg(op, i, a, "is not a whole number", err);
    }
    if (!number || strpbrk(a, "xX"))   /* (Python's float() reads no hexadecimal) */
        return bad_arg(op, i, a, "is not a number", err);
    v->d = num.v;
    return 0;
}

int nop_values_parse(const nop_library *lib, const char *opname, int argc,
                     const char *const *argv, uint64_t seed, int *opi, nop_value **vals,
                     nop_tensor ***tensors, nop_error *err)
{
    *vals = NULL;
    *tensors = NULL;
    *opi = nop_library_find_op(lib, opname);
    if (*opi < 0)
        return no_such_op(lib, opname, err);
    nop_opinfo op;
    nop_library_op(lib, *opi, &op);
    int types[NOP_MAX_ARGS];
    for (int i = 0; i < op.nargs; i++)
        types[i] = (int)op.args[i];
    if (nopi_check_nargs(op.name, types, op.nargs, argc, err) != 0)
        return -1;
    *vals = calloc((size_t)(argc ? argc : 1), sizeof **vals);
    *tensors = calloc((size_t)(argc ? argc : 1), sizeof **tensors);
    if (!*vals || !*tensors)
        return nopi_nomem(err);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        nop_value *v = &(*vals)[i];
        v->type = op.args[i];
        if (op.args[i] != NOP_ARG_TENSOR) {
            if (parse_number(&op, i, a, v, err) != 0)
                return -1;
            continue;
        }
        nop_tensor **t = &(*tensors)[i];
        bool absent = !nop_is_generator(a) && access(a, F_OK) != 0;
        if (absent && nopi_number_like(a)) {   /* a number where a tensor goes */
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "argument %d of op '%s' is a tensor: "
                      "'%s' is a number, not a generator or a .npy file", i + 1, op.name, a);
            nopi_detail(err, "for a tensor of %ss write full:SHAPE:%s (full:4:%s), or give "
                        "a .npy file", a, a, a);
            return -1;
        }
        if (absent && a[0] >= '0' && a[0] <= '9' && !a[strspn(a, "0123456789x")]) {
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "argument %d of op '%s' is a tensor: "
                      "'%s' is a shape, not a generator or a .npy file", i + 1, op.name, a);
            nopi_detail(err, "for a tensor of that shape write a generator with it: randn:%s, "
                        "zeros:%s, ...", a, a);
            return -1;
        }
        const char *meant = absent ? nopi_generator_like(a) : NULL;
        if (meant)
            return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%.*s' is not a generator; did "
                             "you mean '%s'? (argument %d, %s; generators: randn, rand, zeros, "
                             "ones, full, arange, or give a .npy file)",
                             (int)strcspn(a, ":"), a, meant, i + 1, a);
        int rc = nop_is_generator(a) ? nop_tensor_generate(t, a, seed + (uint64_t)i, err)
                                     : nop_tensor_load_npy(t, a, err);
        if (rc != 0)
            return -1;
        v->tensor = (*tensors)[i];
    }
    return 0;
}

void nop_values_free(nop_value *vals, nop_tensor **tensors, int n)
{
    for (int i = 0; tensors && i < n; i++)
        nop_tensor_free(tensors[i]);
    free(tensors);
    free(vals);
}
