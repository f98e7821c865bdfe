/*
 * sandbox.h - running user code in a worker process (internal; see sandbox.c).
 *
 * The worker is a child of the calling process, forked for one piece of work: it inherits
 * the caller's memory (the library, the inputs) copy-on-write, makes an in-process device of
 * its own, does the work and sends what came of it back as records over a pipe.  The caller
 * keeps the verdict: a worker that dies, exits early, or misses its deadline is a device
 * error, and every record it sends is checked before it is believed.
 */
#ifndef NEURONOP_SANDBOX_H
#define NEURONOP_SANDBOX_H

#include "core.h"

/* Record types.  Each record is a uint32 type, a uint64 length and its payload. */
enum nopi_rec {
    NOPI_REC_DIAG = 1,      /* a nop_diag, sent as it happens */
    NOPI_REC_PHASE,         /* struct nopi_phase: what the worker starts now (deadlines) */
    NOPI_REC_DONE,          /* struct nopi_done: the work ended; last record */
    NOPI_REC_OUTPUT,        /* struct nopi_tensor_hdr + data: a run's output */
    NOPI_REC_PRINTF,        /* a run's printf text */
    NOPI_REC_CORES,         /* a run's nop_core_report array */
    NOPI_REC_RUN,           /* struct nopi_run_hdr: a run's scalars */
    NOPI_REC_USER,          /* first type a caller of nopi_sandbox_call may use */
};

/* The phases of a run, and how long each may take. */
enum nopi_phase_kind { NOPI_PHASE_SHAPE, NOPI_PHASE_CORES, NOPI_PHASE_OTHER };
struct nopi_phase {
    int32_t kind;           /* enum nopi_phase_kind */
    int32_t ncores;         /* NOPI_PHASE_CORES: cores to run */
    char what[256];         /* "relu: shape function 'relu_shape'" */
};

struct nopi_done {
    int32_t rc;             /* the work's return value: 0 or -1 */
    nop_error err;          /* with rc -1 */
};

/* The child's end of the pipe. */
typedef struct nopi_wire nopi_wire;

/* Sends a record (from the worker); -1 when the parent is gone. */
int nopi_wire_put(nopi_wire *w, uint32_t type, const void *data, size_t len);
/* Sends a run's result: its scalars, output, printf text and per-core reports. */
int nopi_wire_put_run(nopi_wire *w, const nop_run_result *r);

/* What the worker does: work on cdev, an in-process device like the caller's, sending what
 * the parent needs through w; returns 0 or -1 with err filled. */
typedef int nopi_work_fn(nop_device *cdev, void *ctx, nopi_wire *w, nop_error *err);
/* Receives, in the parent, each record the worker sent that sandbox.c does not handle
 * itself (those of a run: pass them to nopi_run_take; and NOPI_REC_USER ones).  The data
 * is untrusted and valid only during the call; returns 0, or -1 to reject it (a malformed
 * record: the work fails). */
typedef int nopi_take_fn(void *ctx, uint32_t type, const void *data, size_t len);

/* Runs work(.., work_ctx, ..) in a worker process for device dev, passing what it sends to
 * take(take_ctx, ...) in the caller.  budget is
 * how long the work may take in seconds besides the phases it announces (each a run's
 * timeout per core).  Returns the work's own 0 or -1 (with its error) when the worker
 * finished; -1 with a device error when it died, ended early or ran past its deadline. */
int nopi_sandbox_call(nop_device *dev, const char *opname, double budget, nopi_work_fn *work,
                      void *work_ctx, nopi_take_fn *take, void *take_ctx, nop_error *err);

/* Parent side: folds a run's record into *r (which starts zeroed); 1 when the record is not
 * a run's, 0 when taken, -1 when malformed. */
int nopi_run_take(nop_run_result *r, uint32_t type, const void *data, size_t len);

/* device.c: the options dev was made with (timeout and threads resolved). */
nop_device_opts nopi_device_opts(const nop_device *dev);
/* device.c: makes the worker's own in-process device, like dev but sending diagnostics and
 * phases through w; NULL on no memory. */
nop_device *nopi_device_for_worker(const nop_device *dev, nopi_wire *w);
/* device.c: waits for the device's last worker, if any, then remembers pid (0: none) as the
 * one to wait for next; nop_device_free waits for it too. */
void nopi_device_reap(nop_device *dev, pid_t pid);
/* device.c: makes dev, an in-process device inside a worker, report its diagnostics and
 * phases through w. */
void nopi_device_attach(nop_device *dev, nopi_wire *w);
/* device.c: sends a phase record, if the device belongs to a worker. */
void nopi_device_phase(nop_device *dev, int kind, int ncores, const char *what);

/* seccomp.c: confines the calling process (the worker, once its device is ready): process
 * creation, exec, opening files for writing, sockets and signals to other processes are
 * trapped and reported as a kernel's system call the device does not have.  0, or -1 when
 * the filter cannot be installed (err filled).  fd is the pipe its report goes to. */
int nopi_confine(int fd, nop_error *err);

#endif /* NEURONOP_SANDBOX_H */
