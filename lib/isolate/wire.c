/*
 * wire.c - the worker's side of the records it sends its parent (see sandbox.h): writing them,
 * whole and one at a time, under the wire's lock.
 *
 * A record is a uint32 type, a uint64 length and its payload (the payloads' layouts are in
 * server.h; take.c decodes them on the parent's side, believing nothing).  Cores on several
 * threads send diagnostics, hence the lock.  Nothing here runs in the parent.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server.h"
#include "device/trace.h"

/* Writes the n buffers at v (which it consumes) whole, under the wire's lock, going on after
 * signals and short writes; 0, or -1 when the parent is gone. */
static int writev_all(nopi_wire *w, struct iovec *v, int n)
{
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    while (n > 0) {
        ssize_t k = writev(w->fd, v, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = -1;
            break;
        }
        while (n > 0 && (size_t)k >= v->iov_len) {   /* skip what was written */
            k -= (ssize_t)v->iov_len;
            v++, n--;
        }
        if (n > 0) {
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= (size_t)k;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

#define HEAD_BYTES (sizeof(uint32_t) + sizeof(uint64_t))   /* a record's type and length */

/* Writes a record's head, its type then its payload's length, into head. */
static void record_head(char head[HEAD_BYTES], uint32_t type, uint64_t len)
{
    memcpy(head, &type, sizeof type);
    memcpy(head + sizeof type, &len, sizeof len);
}

/* One record whose payload is a then b, in one write where the pipe takes it whole: each
 * write wakes the parent. */
static int put2(nopi_wire *w, uint32_t type, const void *a, size_t alen, const void *b,
                size_t blen)
{
    char head[HEAD_BYTES];
    record_head(head, type, (uint64_t)alen + blen);
    struct iovec iov[3] = { { head, sizeof head }, { (void *)a, alen }, { (void *)b, blen } };
    return writev_all(w, iov, 3);
}

int nopi_wire_put(nopi_wire *w, uint32_t type, const void *data, size_t len)
{
    return put2(w, type, data, len, NULL, 0);
}

/* A record of bytes that stay untouched until the parent has read them (a run's output: a
 * worker frees nothing of a result it has sent): the pipe takes references to their pages
 * instead of copies of them (vmsplice), which cuts what sending a 512 KiB output costs the
 * worker from 0.2 ms to a few hundredths.  Plain writes where that fails. */
static int put_pages(nopi_wire *w, uint32_t type, const void *data, size_t len)
{
    if (len < 65536 || w->copy)
        return nopi_wire_put(w, type, data, len);
    char head[HEAD_BYTES];
    record_head(head, type, len);
    pthread_mutex_lock(&w->lock);
    int rc = nopi_fd_all(w->fd, head, sizeof head, true);
    const char *p = data;
    while (rc == 0 && len) {
        struct iovec iov = { (void *)p, len };
        ssize_t n = vmsplice(w->fd, &iov, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {   /* not a pipe after all, or no vmsplice: copies */
            rc = nopi_fd_all(w->fd, (void *)p, len, true);
            break;
        }
        p += n;
        len -= (size_t)n;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void nopi_wire_phase(nopi_wire *w, int kind, int ncores, const char *what)
{
    struct nopi_phase_page *p = w->phase;
    /* odd while it writes (even if a worker before it died writing), even after */
    uint32_t seq = (atomic_load_explicit(&p->seq, memory_order_relaxed) + 1) | 1;
    atomic_store_explicit(&p->seq, seq, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    p->kind = kind;
    p->ncores = ncores;
    p->start = nopi_now();
    snprintf(p->what, sizeof p->what, "%s", what);
    atomic_store_explicit(&p->seq, seq + 1, memory_order_release);
}

void nopi_wire_diag(void *w, const nop_diag *d)
{
    nopi_wire_put(w, NOPI_REC_DIAG, d, sizeof *d);
}

void nopi_wire_printf(void *w, const char *s, size_t n)
{
    struct nopi_phase_page *p = ((nopi_wire *)w)->phase;
    if (!p)
        return;
    uint64_t total = s ? atomic_load_explicit(&p->printf_total, memory_order_relaxed) : 0;
    for (size_t i = 0; i < n; i++)
        p->printf_ring[(total + i) % NOPI_PHASE_PRINTF] = s[i];
    atomic_store_explicit(&p->printf_total, total + n, memory_order_release);
}

void nopi_wire_retire(nopi_wire *w)
{
    w->retire = true;
}

/* Records gathered to go to the parent in one writev: each write wakes the parent, and a
 * run's result is a handful of records. */
#define BATCH_RECORDS (8 + 2 * NOPI_MAX_CORES)
typedef struct batch {
    struct iovec iov[3 * BATCH_RECORDS];
    char heads[BATCH_RECORDS][HEAD_BYTES];
    int niov, nrec;
} batch;

/* Adds a record whose payload is a then b (the bytes stay the caller's until the flush). */
static void batch_add(batch *bt, uint32_t type, const void *a, size_t alen, const void *b,
                      size_t blen)
{
    char *head = bt->heads[bt->nrec++];
    record_head(head, type, (uint64_t)alen + blen);
    bt->iov[bt->niov++] = (struct iovec){ head, HEAD_BYTES };
    if (alen)
        bt->iov[bt->niov++] = (struct iovec){ (void *)a, alen };
    if (blen)
        bt->iov[bt->niov++] = (struct iovec){ (void *)b, blen };
}

/* Writes what was gathered, whole, and empties the batch; 0, or -1 when the parent is gone. */
static int batch_flush(nopi_wire *w, batch *bt)
{
    int rc = writev_all(w, bt->iov, bt->niov);
    bt->niov = bt->nrec = 0;
    return rc;
}

int nopi_wire_put_run(nopi_wire *w, const nop_run_result *r)
{
    batch bt;
    bt.niov = bt.nrec = 0;
    struct nopi_run_hdr h = { r->threads, r->printf_lost, r->stack_size, r->seconds };
    batch_add(&bt, NOPI_REC_RUN, &h, sizeof h, NULL, 0);
    int rc = 0;
    struct nopi_tensor_hdr th;
    if (r->output) {
        const nt_tensor *t = r->output;
        size_t bytes = (size_t)t->numel * t->itemsize;
        th = (struct nopi_tensor_hdr){ (int32_t)t->dtype, t->ndim, { 0 } };
        memcpy(th.sizes, t->sizes, sizeof th.sizes);
        batch_add(&bt, NOPI_REC_OUTPUT, &th, sizeof th, NULL, 0);
        if (bytes < 65536 || w->copy) {
            batch_add(&bt, NOPI_REC_OUTPUT_DATA, t->data, bytes, NULL, 0);
        } else {   /* by page reference, between what comes before and after */
            rc = batch_flush(w, &bt);
            if (rc == 0)
                rc = put_pages(w, NOPI_REC_OUTPUT_DATA, t->data, bytes);
        }
    }
    if (r->printf_text)
        batch_add(&bt, NOPI_REC_PRINTF, r->printf_text, strlen(r->printf_text), NULL, 0);
    if (r->ncores)
        batch_add(&bt, NOPI_REC_CORES, r->cores, (size_t)r->ncores * sizeof *r->cores, NULL, 0);
    struct nopi_trace_hdr trh[NOPI_MAX_CORES];
    for (int i = 0; r->trace && i < r->trace->ncores && i < NOPI_MAX_CORES; i++) {
        const nopi_trace *t = &r->trace->cores[i];
        trh[i] = (struct nopi_trace_hdr){ i, t->nspans, { 0 }, t->start, t->end };
        memcpy(trh[i].total, t->total, sizeof trh[i].total);
        batch_add(&bt, NOPI_REC_TRACE, &trh[i], sizeof trh[i], t->spans,
                  (size_t)t->nspans * sizeof *t->spans);
    }
    return rc == 0 ? batch_flush(w, &bt) : rc;
}
