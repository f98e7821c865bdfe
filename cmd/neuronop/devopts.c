/*
 * devopts.c - device options and op arguments shared by run, bench and test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

/* ORs the checks named in a list of comma-separated lists into *bits; prints and returns 2
 * for an unknown name. */
static int parse_checks(const struct option_list *l, unsigned *bits)
{
    for (int i = 0; i < l->n; i++) {
        char *copy = strdup(l->items[i]), *save = NULL;
        for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            unsigned b = nop_check_parse(name);
            if (!b) {
                int n = 0;
                while (nop_check_names[n])
                    n++;
                const char *hint = nop_closest(name, nop_check_names, (size_t)n);
                report_plain_error("unknown check '%s'%s%s%s", name,
                                   hint ? "; did you mean '" : "", hint ? hint : "",
                                   hint ? "'?" : "");
                fprintf(stderr, "checks:");
                for (int k = 0; k < n; k++)
                    fprintf(stderr, " %s", nop_check_names[k]);
                fprintf(stderr, ", or all\n");
                free(copy);
                return STATUS_USAGE;
            }
            *bits |= b;
        }
        free(copy);
    }
    return 0;
}

int device_cli_checks(struct device_cli *dc)
{
    unsigned off = 0, on = 0;
    int rc;
    if ((rc = parse_checks(&dc->no_check, &off)) != 0 || (rc = parse_checks(&dc->check, &on)))
        return rc;
    dc->disabled = off & ~on;   /* --check wins over --no-check */
    return 0;
}

void default_tolerances(enum nop_dtype d, double *r, double *a)
{
    switch (d) {
    case NOP_F32: *r = 1.3e-6; *a = 1e-5; break;
    case NOP_F16: *r = 1e-3; *a = 1e-5; break;
    case NOP_BF16: *r = 1.6e-2; *a = 1e-5; break;
    default: *r = 0; *a = 0; break;
    }
}

/* Turns dc into device options; prints and returns 2 for a bad one. */
static int device_opts_of(struct device_cli *dc, nop_device_opts *o)
{
    static const char *const orders[] = { "parallel", "sequential", "reversed", "shuffle" };
    int order = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(dc->schedule ? dc->schedule : "parallel", orders[i]) == 0)
            order = i;
    if (order < 0) {
        const char *hint = nop_closest(dc->schedule, orders, 4);
        report_plain_error("unknown schedule '%s'%s%s%s; use parallel, sequential, reversed "
                           "or shuffle", dc->schedule, hint ? " (did you mean '" : "",
                           hint ? hint : "", hint ? "'?)" : "");
        return STATUS_USAGE;
    }
    if (dc->cores < 0 || dc->threads < 0 || dc->timeout < 0) {
        report_plain_error("--cores, --threads and --timeout take positive numbers");
        return STATUS_USAGE;
    }
    int rc = device_cli_checks(dc);
    if (rc != 0)
        return rc;
    *o = (nop_device_opts){ 0 };
    o->disabled_checks = dc->disabled;
    o->profile = dc->profile;
    o->schedule = (enum nop_schedule)order;
    o->seed = (uint64_t)dc->seed;
    o->cores = (int)dc->cores;
    o->threads = (int)dc->threads;
    o->timeout = dc->timeout;
    o->diag = report_sink;
    return 0;
}

int device_cli_open(struct device_cli *dc, nop_profile **profile, nop_device **dev)
{
    nop_device_opts o;
    int rc = device_opts_of(dc, &o);
    if (rc != 0)
        return rc;
    nop_error err;
    if (nop_profile_load(profile, dc->device ? dc->device : "trn1", share_dir(), &err) != 0)
        return report_error(&err);
    if (nop_device_new(dev, *profile, &o, &err) != 0) {
        nop_profile_free(*profile);
        *profile = NULL;
        return report_error(&err);
    }
    return 0;
}

int device_cli_tracer(struct device_cli *dc, const nop_profile *profile, nop_device **dev)
{
    nop_device_opts o;
    int rc = device_opts_of(dc, &o);
    if (rc != 0)
        return rc;
    o.trace = true;
    nop_error err;
    if (nop_device_new(dev, profile, &o, &err) != 0)
        return report_error(&err);
    return 0;
}

static void print_signature(FILE *f, const nop_opinfo *op)
{
    fprintf(f, "%s(", op->name);
    for (int k = 0; k < op->nargs; k++)
        fprintf(f, "%s%s", k ? ", " : "", nop_argtype_name(op->args[k]));
    fprintf(f, ")");
}

static int bad_arg(const nop_opinfo *op, int i, const char *arg, const char *what)
{
    report_plain_error("argument %d of op '%s' is %s: '%s' %s", i + 1, op->name,
                       op->args[i] == NOP_ARG_TENSOR ? "a tensor" :
                       op->args[i] == NOP_ARG_SCALAR ? "a scalar" :
                       op->args[i] == NOP_ARG_DOUBLE ? "a double" : "an int64", arg, what);
    fprintf(stderr, "signature: ");
    print_signature(stderr, op);
    fprintf(stderr, "\n");
    return STATUS_USAGE;
}

int parse_op_args(const nop_library *lib, const char *opname, int argc, char **argv,
                  uint64_t seed, int *opi, nop_value **vals, nop_tensor ***tensors)
{
    *vals = NULL;
    *tensors = NULL;
    *opi = nop_library_find_op(lib, opname);
    if (*opi < 0) {
        int n = nop_library_op_count(lib);
        const char *names[16];
        for (int i = 0; i < n && i < 16; i++) {
            nop_opinfo o;
            nop_library_op(lib, i, &o);
            names[i] = o.name;
        }
        const char *hint = nop_closest(opname, names, (size_t)(n < 16 ? n : 16));
        if (hint)
            report_plain_error("no op '%s' in library '%s'; did you mean '%s'?", opname,
                               nop_library_name(lib), hint);
        else
            report_plain_error("no op '%s' in library '%s'", opname, nop_library_name(lib));
        fprintf(stderr, "its ops:");
        for (int i = 0; i < n; i++) {
            nop_opinfo o;
            nop_library_op(lib, i, &o);
            fprintf(stderr, " ");
            print_signature(stderr, &o);
        }
        fprintf(stderr, "\n");
        return STATUS_USAGE;
    }
    nop_opinfo op;
    nop_library_op(lib, *opi, &op);
    if (argc != op.nargs) {
        report_plain_error("op '%s' takes %d argument%s, %d given", op.name, op.nargs,
                           op.nargs == 1 ? "" : "s", argc);
        fprintf(stderr, "signature: ");
        print_signature(stderr, &op);
        fprintf(stderr, "\n");
        return STATUS_USAGE;
    }
    *vals = calloc((size_t)(argc ? argc : 1), sizeof **vals);
    *tensors = calloc((size_t)(argc ? argc : 1), sizeof **tensors);
    if (!*vals || !*tensors) {
        return report_nomem();
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        nop_value *v = &(*vals)[i];
        v->type = op.args[i];
        char *end;
        errno = 0;
        switch (op.args[i]) {
        case NOP_ARG_TENSOR: {
            nop_error err;
            int rc = nop_is_generator(a)
                         ? nop_tensor_generate(&(*tensors)[i], a, seed + (uint64_t)i, &err)
                         : nop_tensor_load_npy(&(*tensors)[i], a, &err);
            if (rc != 0)
                return report_error(&err);
            v->tensor = (*tensors)[i];
            break;
        }
        case NOP_ARG_INT64:
            v->i = strtoll(a, &end, 0);
            if (end == a || *end || errno)
                return bad_arg(&op, i, a, "is not a whole number");
            v->is_int = true;
            break;
        case NOP_ARG_DOUBLE:
            v->d = strtod(a, &end);
            if (end == a || *end || errno)
                return bad_arg(&op, i, a, "is not a number");
            break;
        case NOP_ARG_SCALAR:
            v->i = strtoll(a, &end, 0);
            if (end != a && !*end && !errno) {
                v->is_int = true;
                break;
            }
            errno = 0;
            v->d = strtod(a, &end);
            if (end == a || *end || errno)
                return bad_arg(&op, i, a, "is not a number");
            break;
        }
    }
    return 0;
}

void free_op_args(nop_value *vals, nop_tensor **tensors, int n)
{
    for (int i = 0; tensors && i < n; i++)
        nop_tensor_free(tensors[i]);
    free(tensors);
    free(vals);
}

int op_call_open(struct op_call *oc, struct device_cli *dc, char **args, int nargs,
                 bool verbose)
{
    *oc = (struct op_call){ .name = args[1], .nvals = nargs - 2 };
    int rc = open_target(args[0], verbose, dc->memcheck, &oc->lib);
    if (rc == 0)
        rc = parse_op_args(oc->lib, oc->name, oc->nvals, args + 2, (uint64_t)dc->seed, &oc->op,
                           &oc->vals, &oc->tensors);
    if (rc == 0)
        rc = device_cli_open(dc, &oc->profile, &oc->dev);
    return rc;
}

void op_call_close(struct op_call *oc)
{
    free_op_args(oc->vals, oc->tensors, oc->nvals);
    nop_device_free(oc->dev);   /* before its profile */
    nop_profile_free(oc->profile);
    nop_library_close(oc->lib);
    *oc = (struct op_call){ 0 };
}
