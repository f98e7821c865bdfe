/*
 * device.h - what the layers above device/ (isolate/, test/, measure/) use of a device besides
 * the public API: its options, where its diagnostics and phases go, and running an op in this
 * process.  device.c implements it; nothing here knows of worker processes, so device/ never
 * includes isolate/ (isolate/ installs its sink and phase hook through these).
 */
#ifndef NEURONOP_DEVICE_H
#define NEURONOP_DEVICE_H

#include "core.h"

/* The phases of a run, which a device announces as it enters each. */
enum nopi_phase_kind {
    NOPI_PHASE_SHAPE, NOPI_PHASE_CORES, NOPI_PHASE_OTHER,
    NOPI_PHASE_LOAD,        /* loading the library: its constructors run (as long as a shape
                             * function may) */
};
/* Receives a phase: kind, the cores of a NOPI_PHASE_CORES one, and where it is in words. */
typedef void nopi_phase_fn(void *ctx, int kind, int ncores, const char *what);

/* Receives a run's kernel printf text as it is written, n bytes at s; s NULL when a run
 * begins (the text before is an earlier run's). */
typedef void nopi_printf_fn(void *ctx, const char *s, size_t n);

/* The options dev was made with (timeout and threads resolved). */
nop_device_opts nopi_device_opts(const nop_device *dev);
/* The profile dev was made for. */
const nop_profile *nopi_device_profile(const nop_device *dev);
/* How many cores a run of lib's ops uses on dev. */
int nopi_device_cores(const nop_device *dev, const nop_library *lib);
/* The most cores a run on dev may use (its --cores, else its profile's). */
int nopi_device_max_cores(const nop_device *dev);
/* Makes dev run in this process and send its diagnostics to diag(diag_ctx, ..) and its
 * phases to phase(phase_ctx, ..) (NULL: none). */
void nopi_device_set_sink(nop_device *dev, void (*diag)(void *, const nop_diag *),
                          void *diag_ctx, nopi_phase_fn *phase, void *phase_ctx);
/* Sends dev's printf text, as its kernels write it, to fn(ctx, ..) too (NULL: nowhere): what
 * a worker's parent reads when the worker dies before it sends its run's text. */
void nopi_device_set_printf_sink(nop_device *dev, nopi_printf_fn *fn, void *ctx);
/* Makes dev's later runs those of a new device made with o, without making one (its host
 * threads, stacks and buffers are kept): o's cores, schedule, seed and disabled checks, which
 * every run reads afresh, and each core's TCM zeroed, as a new device's is.  o's threads,
 * timeout, profile, trace and isolate must be dev's (nopi_device_opts).  For a caller that
 * runs an op under many executions (testrun.c).  0, or -1 with err filled (o's cores out of
 * range, or o differs where it must not). */
int nopi_device_renew(nop_device *dev, const nop_device_opts *o, nop_error *err);
/* Allocates what runs of kernels with stack_size-byte stacks on cores [0, ncores) use (stacks,
 * painted; TCM; the printf buffer; the shape and reference stacks) as a first run would: a
 * fork server does it once, so that its children inherit them copy-on-write and a child's
 * kernel writes (and faults in) only the pages it uses.  0, or -1 on no memory. */
int nopi_device_warm(nop_device *dev, size_t stack_size, int ncores);
/* Starts dev's host threads (the watchdog), as its first run would: a fork server's child
 * does it while it waits for its request.  0, or -1 on no memory. */
int nopi_device_start(nop_device *dev);
/* Makes dev's host threads' pool a resident one (pool.h), whose threads a request starts
 * and nopi_device_end_threads ends: a kept worker has no thread but its main one between
 * requests.  0, or -1 on no memory (the device then starts them as usual). */
int nopi_device_start_resident(nop_device *dev);
/* Ends the threads of dev's resident pool and disarms its timer: what a kept worker does
 * after each request, before it puts itself back. */
void nopi_device_end_threads(nop_device *dev);
/* Gives the calling thread, which runs dev's later runs, a timer of its own for its cores'
 * time limits (fiber.h), so that a resident pool need start no watchdog for a run on that
 * thread alone.  Returns the timer's kernel id (made once), or -1 when none can be made. */
int nopi_device_own_timer(nop_device *dev);
/* What a layer above keeps with dev (NULL: nothing yet), and setting it: nop_device_free
 * calls ext_free(ext) first. */
void *nopi_device_ext(const nop_device *dev);
void nopi_device_set_ext(nop_device *dev, void *ext, void (*ext_free)(void *));
/* Waits for the device's last worker process, if any, and what its group left
 * (nopi_reap_group), then remembers pid (0: none) as the one to wait for next;
 * nop_device_free waits for it too. */
void nopi_device_reap(nop_device *dev, pid_t pid);
/* Runs op (or, ref >= 0, reference function ref) in this process, loading lib for the run
 * if it was only described; as nop_device_run. */
int nopi_device_run_here(nop_device *dev, const nop_library *lib, int op, int ref,
                         const nop_value *args, int nargs, nop_run_result *res,
                         nop_error *err);

#endif /* NEURONOP_DEVICE_H */
