/*
 * devopts.c - device options shared by run, bench and test, and an op call as run and bench
 * take it (LIB|DIR OP ARG...).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

bool sandbox_on(void)
{
    const char *v = getenv("NEURONOP_SANDBOX");
    return !v || strcmp(v, "off") != 0;
}

const char *const schedule_names[] = { "parallel", "sequential", "reversed", "shuffle", NULL };

/* ORs the checks named in a list of comma-separated lists into *bits; prints a usage error
 * of spec's command and returns 2 for an unknown name. */
static int parse_checks(const struct command_spec *spec, const struct option_list *l,
                        unsigned *bits)
{
    for (int i = 0; i < l->n; i++) {
        if (!l->items[i][strspn(l->items[i], ",")])
            return command_usage_error(spec, "--check and --no-check take a comma-separated "
                                       "list of checks, not '%s'", l->items[i]);
        char *copy = strdup(l->items[i]), *save = NULL;
        if (!copy)
            return report_nomem();
        for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            unsigned b = nop_check_parse(name);
            static const char *const always[] = { "bounds", "dtype", "shape",
                                                  "shape-function", "stack", "crash", "time",
                                                  "timeout" };
            for (size_t k = 0; !b && k < sizeof always / sizeof always[0]; k++) {
                if (strcmp(name, always[k]) != 0)
                    continue;
                /* (a new user's find: "unknown check 'bounds'" read as a typo) */
                command_usage_error(spec, "'%s' is not a check --check and --no-check "
                                    "choose: bounds, dtype, shape-function, stack, crash and "
                                    "time checks are always on (without them a kernel could "
                                    "corrupt neuronop's own memory)", name);
                free(copy);
                return STATUS_USAGE;
            }
            if (!b) {
                int n = 0;
                while (nop_check_names[n])
                    n++;
                const char *hint = nop_closest(name, nop_check_names, (size_t)n);
                char names[512] = "";
                for (int k = 0, at = 0; k < n && at < (int)sizeof names; k++)
                    at += snprintf(names + at, sizeof names - (size_t)at, " %s",
                                   nop_check_names[k]);
                command_usage_error(spec, "unknown check '%s'%s%s%s (checks:%s, or all)", name,
                                    hint ? "; did you mean '" : "", hint ? hint : "",
                                    hint ? "'?" : "", names);
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
    if ((rc = parse_checks(dc->spec, &dc->no_check, &off)) != 0 ||
        (rc = parse_checks(dc->spec, &dc->check, &on)) != 0)
        return rc;
    dc->disabled = off & ~on;   /* --check wins over --no-check */
    return 0;
}

/* Turns dc into device options; prints and returns 2 for a bad one. */
static int device_opts_of(struct device_cli *dc, nop_device_opts *o)
{
    int order = -1;
    for (int i = 0; schedule_names[i]; i++)
        if (strcmp(dc->schedule ? dc->schedule : "parallel", schedule_names[i]) == 0)
            order = i;
    if (order < 0) {
        const char *hint = nop_closest(dc->schedule, schedule_names, 4);
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
    o->diag = dc->diag ? dc->diag : report_sink;
    o->diag_ctx = dc->diag_ctx;
    o->isolate = sandbox_on();
    o->keep_worker = o->isolate && dc->keep_worker;
    return 0;
}

int device_cli_open(struct device_cli *dc, nop_profile **profile, nop_device **dev)
{
    nop_device_opts o;
    int rc = device_opts_of(dc, &o);
    if (rc != 0)
        return rc;
    nop_error err;
    if (nop_profile_load(profile, dc->device ? dc->device : DEFAULT_DEVICE, share_dir(), &err) != 0)
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

/* Whether LIB and OP came the wrong way round: no file is named like the first, and the
 * second names a library (a library folder, manifest or shared object).  Says so, with the
 * command as it was meant. */
static bool swapped(const struct device_cli *dc, char **args, int nargs)
{
    struct stat st;
    if (!args[0][0] || stat(args[0], &st) == 0 || errno != ENOENT || !names_target(args[1]))
        return false;
    report_plain_error("cannot find '%s'; did you mean 'neuronop %s %s %s%s'? (the library "
                       "comes first, then the op)", args[0], dc->spec->name, args[1], args[0],
                       nargs > 2 ? " ..." : "");
    return true;
}

int op_call_open(struct op_call *oc, struct device_cli *dc, char **args, int nargs,
                 bool verbose)
{
    *oc = (struct op_call){ .name = args[1], .nvals = nargs - 2 };
    if (swapped(dc, args, nargs))
        return STATUS_USAGE;
    int rc = open_target(args[0], dc->build_dir, verbose, dc->memcheck, &oc->lib);
    nop_error err;
    if (rc == 0 && nop_values_parse(oc->lib, oc->name, oc->nvals, (const char *const *)args + 2,
                                    (uint64_t)dc->seed, &oc->op, &oc->vals, &oc->tensors,
                                    &err) != 0)
        rc = report_error(&err);
    nop_opinfo info;
    const char *ns = oc->lib ? nop_library_namespace(oc->lib) : NULL;
    if (rc == 0 && nop_library_op(oc->lib, oc->op, &info) == 0)
        snprintf(oc->display, sizeof oc->display, "%s%s%s", ns ? ns : "", ns ? "::" : "",
                 info.name);
    if (rc == 0)
        rc = device_cli_open(dc, &oc->profile, &oc->dev);
    char why[CORES_WHY_SIZE];
    if (rc == 0 && (rc = device_cli_cores_fit(dc, oc->lib, oc->profile, why, sizeof why)))
        command_usage_error(dc->spec, "%s", why);
    return rc;
}

int device_cli_cores_fit(const struct device_cli *dc, const nop_library *lib,
                         const nop_profile *profile, char *why, size_t size)
{
    if (dc->cores && lib && !nop_library_multicore(lib))
        snprintf(why, size, "--cores %ld: library '%s' is single-core, so its ops run on one "
                 "core; leave out --cores, or build it with 'multicore: true'", dc->cores,
                 nop_library_name(lib));
    else if (dc->cores > nop_profile_cores(profile))
        snprintf(why, size, "--cores %ld: device '%s' has %d cores; give 1 to %d", dc->cores,
                 nop_profile_name(profile), nop_profile_cores(profile),
                 nop_profile_cores(profile));
    else
        return 0;
    return STATUS_USAGE;
}

void op_call_close(struct op_call *oc)
{
    nop_values_free(oc->vals, oc->tensors, oc->nvals);
    nop_device_free(oc->dev);   /* before its profile */
    nop_profile_free(oc->profile);
    nop_library_close(oc->lib);
    *oc = (struct op_call){ 0 };
}
