/*
 * pool.h - a device's persistent host threads (internal; see pool.c).
 */
#ifndef NEURONOP_POOL_H
#define NEURONOP_POOL_H

#include "core.h"

typedef struct nopi_pool nopi_pool;

/* Starts threads - 1 helper threads and a watchdog; the caller of nopi_pool_run is the other
 * worker.  NULL on no memory (a pool that got fewer helpers still works, with fewer). */
nopi_pool *nopi_pool_new(int threads);
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
