/*
 * pool.c - a device's host threads: helper workers and the watchdog, created once (the helpers
 * with the first run that can use them) and reused for every run, so launching an op costs a
 * few wake-ups rather than thread creation.
 *
 * A run hands the pool a job (the cores, their order, how many threads may take part).  The
 * calling thread works on it too; helpers join in up to the job's thread count, each taking
 * the next core in the order until none is left.  While a job is active the watchdog pokes
 * any worker whose core is past its deadline (fiber.c stops it).
 *
 * A resident pool (a kept worker's) starts its watchdog too with a request's first job that
 * needs it (its caller has a timer of its own, fiber.h), and ends every thread after the
 * request: between requests the worker has no thread but its main one, which is what the
 * parent counts before it sends the next request.  A watchdog that lived on between
 * requests could be ended, or taken over, by a thread of user code, which would then pass
 * for it in that count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fiber.h"
#include "pool.h"

#define MAX_WORKERS 64

typedef struct job {
    nopi_run *run;
    const int *order;
    int nthreads;
    uintptr_t text_lo, text_hi;
    void (*after)(nopi_core *);
    _Atomic int next;
} job;

struct nopi_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, done, dog_wake;
    job *job;                   /* the active job, or NULL */
    unsigned generation;        /* counts jobs, so helpers see a new one */
    int joined, active;         /* helpers that took the job / are still on it */
    bool quit;
    bool threads_quit;          /* nopi_pool_end_threads: the request's threads end */
    int want;                   /* helpers to start, with the first job that can use them */
    bool started;
    int nhelpers;
    pthread_t helpers[MAX_WORKERS], dog;
    const nopi_stack *stacks;   /* a resident pool's own, or NULL */
    bool have_dog;
    bool dog_per_request;       /* a resident pool's: started by a job, ended after it */
    bool dog_ticking;           /* the watchdog is in its 5 ms loop: no need to wake it */
    nopi_worker *workers[MAX_WORKERS + 1];   /* registered for the watchdog */
    int failed_helpers;
    void *region;               /* a resident pool's own mapping (it lives in it), or NULL */
    size_t region_len;
};

static void work_on(job *j, nopi_worker *w)
{
    w->text_lo = j->text_lo;
    w->text_hi = j->text_hi;
    for (;;) {
        int i = atomic_fetch_add(&j->next, 1);
        if (i >= j->run->ncores)
            break;
        nopi_core *c = &j->run->cores[j->order[i]];
        nopi_run_core(c, j->run->kernel);
        if (j->after)
            j->after(c);
    }
}

static void set_worker(nopi_pool *p, int slot, nopi_worker *w)
{
    pthread_mutex_lock(&p->lock);
    p->workers[slot] = w;
    pthread_mutex_unlock(&p->lock);
}

typedef struct helper_arg {
    nopi_pool *pool;
    int slot;
} helper_arg;

static void *helper(void *arg)
{
    helper_arg *ha = arg;
    nopi_pool *p = ha->pool;
    int slot = ha->slot;
    free(ha);
    nopi_worker w;
    bool ready = nopi_worker_enter(&w, 0, 0) == 0;
    if (ready)
        set_worker(p, slot, &w);
    unsigned seen = 0;
    pthread_mutex_lock(&p->lock);
    if (!ready)
        p->failed_helpers++;
    for (;;) {
        while (!p->quit && !p->threads_quit && (p->generation == seen || !p->job))
            pthread_cond_wait(&p->work, &p->lock);
        if (p->quit || p->threads_quit)
            break;
        seen = p->generation;
        job *j = p->job;
        if (!ready || p->joined >= j->nthreads - 1)
            continue;   /* this job needs fewer threads */
        p->joined++;
        p->active++;
        pthread_mutex_unlock(&p->lock);
        work_on(j, &w);
        pthread_mutex_lock(&p->lock);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    if (ready) {
        set_worker(p, slot, NULL);
        nopi_worker_leave(&w);
    }
    return NULL;
}

/* Every 5 ms while jobs come, pokes workers whose core is past its deadline.  It keeps
 * ticking for a while after a job ends, so back-to-back runs (a benchmark) need not wake it
 * each time; after 20 idle ticks it sleeps until woken. */
static void *watchdog(void *arg)
{
    nopi_pool *p = arg;
    int idle = 0;
    pthread_mutex_lock(&p->lock);
    while (!p->quit && !p->threads_quit) {
        if (!p->job && ++idle > 20) {
            p->dog_ticking = false;
            pthread_cond_wait(&p->dog_wake, &p->lock);
            idle = 0;
            continue;
        }
        if (p->job)
            idle = 0;
        p->dog_ticking = true;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        for (int i = 0; i <= MAX_WORKERS; i++) {
            nopi_worker *w = p->workers[i];
            int64_t deadline = w ? nopi_worker_deadline(w) : 0;
            if (deadline && t > deadline)
                nopi_worker_poke(w);
        }
        t += 5 * 1000 * 1000;
        ts.tv_sec = (time_t)(t / 1000000000);
        ts.tv_nsec = (long)(t % 1000000000);
        pthread_cond_timedwait(&p->dog_wake, &p->lock, &ts);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts thread `slot` (0: the watchdog) of p running fn(arg): on a resident pool's stack
 * for it, or one of NOPI_POOL_STACK bytes (far less than glibc's 8 MiB default, which a kept
 * worker, making its threads anew for every request, would map and unmap each time); 0 or an
 * errno. */
static int start_thread(nopi_pool *p, int slot, pthread_t *t, void *(*fn)(void *), void *arg)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    if (p->stacks)
        pthread_attr_setstack(&a, p->stacks[slot].lo,
                              (size_t)(p->stacks[slot].hi - p->stacks[slot].lo));
    else
        pthread_attr_setstacksize(&a, NOPI_POOL_STACK);
    int rc = pthread_create(t, &a, fn, arg);
    pthread_attr_destroy(&a);
    return rc;
}

/* Sets up p's locks and (want) its helpers' count, and starts its watchdog (a resident
 * pool's waits for the first job). */
static void init(nopi_pool *p, int threads, const nopi_stack *stacks)
{
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->dog_wake, &ca);
    pthread_condattr_destroy(&ca);
    p->stacks = stacks;
    p->dog_per_request = stacks != NULL;
    if (!p->dog_per_request)
        p->have_dog = start_thread(p, 0, &p->dog, watchdog, p) == 0;
    p->want = threads - 1 < MAX_WORKERS ? threads - 1 : MAX_WORKERS;
}

nopi_pool *nopi_pool_new(int threads)
{
    nopi_pool *p = calloc(1, sizeof *p);
    if (p)
        init(p, threads, NULL);
    return p;
}

/* Starts the helpers, once: with the first job that has work for more than one thread, so
 * that a device that only ever runs one core at a time (a single-core op in a fresh worker
 * process) never makes them. */
static void start_helpers(nopi_pool *p)
{
    p->started = true;
    for (int i = 0; i < p->want; i++) {
        helper_arg *ha = malloc(sizeof *ha);
        if (!ha)
            break;
        *ha = (helper_arg){ p, i + 1 };
        if (start_thread(p, i + 1, &p->helpers[i], helper, ha) != 0) {
            free(ha);
            break;
        }
        p->nhelpers++;
    }
}

nopi_pool *nopi_pool_new_resident(int threads)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int nstacks = threads < MAX_WORKERS + 1 ? threads : MAX_WORKERS + 1;
    size_t head = (sizeof(nopi_pool) + (size_t)nstacks * sizeof(nopi_stack) + page - 1) /
                  page * page;
    size_t each = page + NOPI_POOL_STACK;   /* a guard page below each stack */
    size_t len = head + (size_t)nstacks * each;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    madvise(m, len, MADV_DONTDUMP);   /* a flag of its own: no neighbour merges with it */
    nopi_pool *p = (nopi_pool *)(void *)m;
    nopi_stack *stacks = (nopi_stack *)(void *)(p + 1);
    for (int i = 0; i < nstacks; i++) {
        unsigned char *g = m + head + (size_t)i * each;
        mprotect(g, page, PROT_NONE);
        stacks[i] = (nopi_stack){ g, each, page, g + page, g + each };
    }
    p->region = m;
    p->region_len = len;
    init(p, nstacks, stacks);
    return p;
}

void nopi_pool_end_threads(nopi_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->threads_quit = true;
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->dog_wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nhelpers; i++)
        pthread_join(p->helpers[i], NULL);
    bool dog = p->dog_per_request && p->have_dog;
    if (dog)
        pthread_join(p->dog, NULL);
    pthread_mutex_lock(&p->lock);
    p->threads_quit = false;
    p->started = false;   /* the next job that can use them starts them again */
    p->nhelpers = p->failed_helpers = 0;
    if (dog)
        p->have_dog = p->dog_ticking = false;
    pthread_mutex_unlock(&p->lock);
}

void nopi_pool_free(nopi_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->dog_wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nhelpers; i++)
        pthread_join(p->helpers[i], NULL);
    if (p->have_dog)
        pthread_join(p->dog, NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->dog_wake);
    pthread_mutex_destroy(&p->lock);
    if (p->region)
        munmap(p->region, p->region_len);
    else
        free(p);
}

int nopi_pool_threads(const nopi_pool *p)
{
    return (p->started ? p->nhelpers - p->failed_helpers : p->want) + 1;
}

void nopi_pool_run(nopi_pool *p, nopi_worker *self, nopi_run *run, const int *order,
                   int nthreads, uintptr_t text_lo, uintptr_t text_hi,
                   void (*after)(nopi_core *))
{
    job j = { run, order, nthreads, text_lo, text_hi, after, 0 };
    bool helpers = nthreads > 1 && run->ncores > 1;
    if (helpers && !p->started)
        start_helpers(p);
    /* a resident pool's watchdog watches what no timer does: the helpers, or a caller
     * without a timer of its own (a thread costs a kept worker's request 100 us or more) */
    if (p->dog_per_request && !p->have_dog && ((helpers && p->nhelpers) || !self->has_timer))
        p->have_dog = start_thread(p, 0, &p->dog, watchdog, p) == 0;
    pthread_mutex_lock(&p->lock);
    p->workers[0] = self;
    p->job = &j;
    p->generation++;
    p->joined = 0;
    if (nthreads > 1)
        pthread_cond_broadcast(&p->work);
    if (!p->dog_ticking)
        pthread_cond_signal(&p->dog_wake);
    pthread_mutex_unlock(&p->lock);

    work_on(&j, self);

    pthread_mutex_lock(&p->lock);
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->lock);
    p->job = NULL;
    p->workers[0] = NULL;
    pthread_mutex_unlock(&p->lock);
}
