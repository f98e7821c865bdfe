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
/* A pool that lives in a mapping of its own with its threads' stacks, for a kept worker,
 * which puts that mapping back with the rest of its memory between requests: its pages stay
 * resident, so a request's threads start on stacks that cost no page faults.  Its threads,
 * the watchdog and the helpers, are started by a request's first job (the helpers by the
 * first that can use them) and ended by nopi_pool_end_threads before the worker puts itself
 * back.  NULL on no memory. */
nopi_pool *nopi_pool_new_resident(int threads);
/* Ends and joins the threads a resident pool's jobs started (a pool of nopi_pool_new's
 * keeps its watchdog); the next job starts them again. */
void nopi_pool_end_threads(nopi_pool *p);
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
