/*
 * run.c - nop_device_run and nop_device_run_reference: in this process, or (an isolating
 * device) in a worker process, whose result comes back as records and is checked here.
 *
 * The entry points live above device/ so that the device knows nothing of worker processes:
 * a worker's device is an in-process one whose diagnostics and phases go to its wire
 * (nopi_device_attach).
 */
#include <string.h>

#include "sandbox.h"

static void wire_phase(void *w, int kind, int ncores, const char *what)
{
    nopi_wire_phase(w, kind, ncores, what);
}

void nopi_device_attach(nop_device *dev, nopi_wire *w)
{
    nopi_device_set_sink(dev, nopi_wire_diag, w, wire_phase, w);   /* to the parent, as
                                                                     * they happen */
}

nop_device *nopi_device_for_worker(const nop_device *dev, nopi_wire *w)
{
    nop_device *d;
    nop_device_opts o = nopi_device_opts(dev);
    if (nop_device_new(&d, nopi_device_profile(dev), &o, NULL) != 0)
        return NULL;
    nopi_device_attach(d, w);
    return d;
}

/* ---- in a worker process ---------------------------------------------------------------- */

typedef struct run_work {
    const nop_library *lib;
    int op, ref;
    const nop_value *args;
    int nargs;
} run_work;

static int run_in_worker(nop_device *cdev, void *ctx, nopi_wire *w, nop_error *err)
{
    const run_work *rw = ctx;
    nop_run_result r;
    int rc = nopi_device_run_here(cdev, rw->lib, rw->op, rw->ref, rw->args, rw->nargs, &r,
                                  err);
    if (nopi_wire_put_run(w, &r) != 0 && rc == 0)
        rc = nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "cannot send the result");
    return rc;   /* r is freed with the process (its output went by page reference) */
}

static int take_run(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    return nopi_run_take(ctx, type, data, len, own) == 0 ? 0 : -1;
}

/* Runs op (or reference ref) in a worker process. */
static int run_isolated(nop_device *dev, const nop_library *lib, int op, int ref,
                        const nop_value *args, int nargs, nop_run_result *res, nop_error *err)
{
    memset(res, 0, sizeof *res);
    if (op < 0 || op >= lib->desc->nops)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no op %d in '%s'", op,
                         lib->desc->name);
    run_work rw = { lib, op, ref, args, nargs };
    /* loading the library, binding and the output rules: seconds at most, even for huge
     * tensors; the run's phases come on top (nopi_watch_read) */
    double budget = 5.0;
    int rc = nopi_sandbox_call(dev, lib->desc->ops[op].name, budget, 1, run_in_worker, &rw,
                               take_run, res, err);
    if (rc != 0) {
        nopi_tensor_free(res->output);
        res->output = NULL;
    }
    return rc;
}

int nop_device_run(nop_device *dev, const nop_library *lib, int op, const nop_value *args,
                   int nargs, nop_run_result *res, nop_error *err)
{
    if (nopi_device_opts(dev).isolate)
        return run_isolated(dev, lib, op, -1, args, nargs, res, err);
    return nopi_device_run_here(dev, lib, op, -1, args, nargs, res, err);
}

int nop_device_run_reference(nop_device *dev, const nop_library *lib, int ref,
                             const nop_value *args, int nargs, nop_run_result *res,
                             nop_error *err)
{
    if (ref < 0 || ref >= lib->desc->nrefs) {
        memset(res, 0, sizeof *res);
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no reference function %d in '%s'",
                         ref, lib->desc->name);
    }
    int op = lib->desc->refs[ref].op;
    if (nopi_device_opts(dev).isolate)
        return run_isolated(dev, lib, op, ref, args, nargs, res, err);
    return nopi_device_run_here(dev, lib, op, ref, args, nargs, res, err);
}
