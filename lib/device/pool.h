/*
 * pool.h - a device's persistent host threads (internal; see pool.c).
 */
#ifndef NEURONOP_POOL_H
#define NEURONOP_POOL_H

#include "core.h"

typedef struct nopi_pool nopi_pool;

/* A pool thread's own stack: it runs kernels on their cores' stacks and handles signals on
 * an alternate one, so the runtime's own frames are all it holds. */
#define NOPI_POOL_STACK (256 * 1024)

/* Starts threads - 1 helper threads and a watchdog, each on a stack of NOPI_POOL_STACK
 * bytes; the caller of nopi_pool_run is the other worker.  NULL on no memory (a pool that
 * got fewer helpers still works, with fewer). */
nopi_pool *nopi_pool_new(int threads);
/* A pool that lives in a mapping of its own with its threads' stacks: a kept worker takes
 * its snapshot with its watchdog there (waiting) and leaves that mapping out of what it
 * restores (nopi_pool_region), so the watchdog serves request after request.  The watchdog
 * runs no user code and never allocates, so nothing of its own is in what is restored;
 * helpers, which run kernels (and may allocate, or make thread-local storage), are started
 * by a request's first job that can use them and ended by nopi_pool_end_helpers before the
 * restore.  NULL on no memory. */
nopi_pool *nopi_pool_new_resident(int threads);
/* A resident pool's mapping and how many threads it keeps between requests (the watchdog). */
void nopi_pool_region(const nopi_pool *p, const void **addr, size_t *len, int *threads);
/* Ends and joins p's helpers (the watchdog stays); the next job that can use them starts
 * them again. */
void nopi_pool_end_helpers(nopi_pool *p);
/* Stops and joins every thread. */
void nopi_pool_free(nopi_pool *p);
/* Threads that can take part in a job, the caller included. */
int nopi_pool_threads(const nopi_pool *p);
/* Runs run's cores in `order` on up to nthreads workers, self (the calling thread, already a
 * worker) included; calls after(core) on the worker that ran it; returns when all are done. */
void nopi_pool_run(nopi_pool *p, nopi_worker *self, nopi_run *run, const int *order,
                   int nthreads, uintptr_t text_lo, uintptr_t text_hi,
                   void (*after)(nopi_core *));

#endif /* NEURONOP_POOL_H */
