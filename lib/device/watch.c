/*
 * watch.c - the parent's side of a request to a worker process (see sandbox.h): reading the
 * records it sends back, under deadlines.
 *
 * Small records are read into one buffer and handled as each completes; a large one (a run's
 * output) is read straight into a block of its own, which a take function may keep.  The
 * deadline is the request's budget until the worker enters a phase, which it says on a page
 * shared with the parent (looked at every LOOK seconds and whenever records come): then it is
 * the phase's.  Nothing the worker sends is believed unchecked: a record of a bad length, one
 * after DONE, a take function's refusal, or more phases than the request's runs have (each
 * seen change counts, so code that keeps rewriting the page to postpone its deadline is
 * caught) makes the request's report malformed.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

#define GRACE 2.0                  /* seconds a phase may overrun its cores' time limits */
#define MAX_RECORD (1ull << 36)    /* no record is larger than 64 GiB */
#define BIG_RECORD 65536           /* records from this size are read into a block of their own */
#define LOOK 0.1                   /* seconds between looks at the worker's phase page */

/* Makes every string of d end inside its array (the worker may have sent anything). */
static void terminate(nop_diag *d)
{
    d->file[sizeof d->file - 1] = d->where[sizeof d->where - 1] = '\0';
    d->msg[sizeof d->msg - 1] = d->detail[sizeof d->detail - 1] = '\0';
    if ((unsigned)d->severity > NOP_SEV_NOTE)
        d->severity = NOP_SEV_ERROR;
}

/* Handles one complete record; -1 when it is malformed.  own: as for nopi_take_fn. */
static int handle(nopi_watch *wt, uint32_t type, const char *data, size_t len, void **own)
{
    if (wt->done)
        return -1;   /* nothing follows DONE */
    switch (type) {
    case NOPI_REC_DIAG: {
        nop_diag d;
        if (len != sizeof d)
            return -1;
        memcpy(&d, data, sizeof d);
        terminate(&d);
        nop_device_opts o = nopi_device_opts(wt->dev);
        if (o.diag)
            o.diag(o.diag_ctx, &d);
        return 0;
    }
    case NOPI_REC_DONE:
        if (len != sizeof wt->result)
            return -1;
        memcpy(&wt->result, data, sizeof wt->result);
        terminate(&wt->result.err.diag);
        wt->done = true;
        return 0;
    default:
        return wt->take(wt->ctx, type, data, len, own) == 0 ? 0 : -1;
    }
}

/* Reads the worker's phase page when it has changed: the deadline becomes the phase's,
 * counted from when the worker says the phase began (never later than now).  A page being
 * written, or written to meanwhile, is read at the next look. */
static void look_at_phase(nopi_watch *wt)
{
    const struct nopi_phase_page *p = wt->phase;
    uint32_t seq = atomic_load_explicit(&p->seq, memory_order_acquire);
    if (seq == wt->seq || (seq & 1))
        return;
    int kind = p->kind, ncores = p->ncores;
    double start = p->start;
    char what[sizeof p->what];
    memcpy(what, p->what, sizeof what);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&p->seq, memory_order_relaxed) != seq)
        return;
    wt->seq = seq;
    if (wt->phases_left == 0) {   /* more than its work has: forged to postpone the deadline */
        wt->malformed = true;
        return;
    }
    if (wt->phases_left > 0)
        wt->phases_left--;
    what[sizeof what - 1] = '\0';
    snprintf(wt->where, sizeof wt->where, "%s", what);
    double now = nopi_now();
    if (!(start <= now))
        start = now;   /* in the future, or not a number */
    int n = ncores < 1 ? 1 : ncores > 64 ? 64 : ncores;
    wt->deadline = start + (kind == NOPI_PHASE_SHAPE ? wt->timeout + GRACE
                            : kind == NOPI_PHASE_CORES ? wt->timeout * n + GRACE : wt->budget);
    if (wt->limit > 0 && wt->deadline > wt->limit)
        wt->deadline = wt->limit;   /* any number of phases, but not forever */
}

#define HEAD (sizeof(uint32_t) + sizeof(uint64_t))   /* a record's type and length */

/* Handles the complete records at the start of buf[0, have); returns the bytes used. */
static size_t handle_all(nopi_watch *wt, const char *buf, size_t have)
{
    size_t used = 0;
    while (have - used >= HEAD && !wt->malformed) {
        uint32_t type;
        uint64_t len;
        memcpy(&type, buf + used, sizeof type);
        memcpy(&len, buf + used + sizeof type, sizeof len);
        if (len > MAX_RECORD) {
            wt->malformed = true;
            break;
        }
        if (have - used - HEAD < len)
            break;
        if (handle(wt, type, buf + used + HEAD, (size_t)len, NULL) != 0)
            wt->malformed = true;
        used += HEAD + (size_t)len;
    }
    return used;
}

/* A large record being read straight into a block of its own (which a take function may
 * keep: a run's output is not copied again). */
typedef struct big {
    char *data;
    uint32_t type;
    size_t len, have;
} big;

/* Reads from fd: into the large record in progress if there is one, else into buf; false at
 * end of file or on an error. */
static bool read_some(nopi_watch *wt, int fd, big *b, char **buf, size_t *have, size_t *cap)
{
    if (b->data) {
        ssize_t n = read(fd, b->data + b->have, b->len - b->have);
        if (n < 0 && errno == EINTR)
            return true;
        if (n <= 0)
            return false;
        if ((b->have += (size_t)n) == b->len) {
            void *own = b->data;
            if (handle(wt, b->type, b->data, b->len, &own) != 0)
                wt->malformed = true;
            free(own);
            b->data = NULL;
        }
        return true;
    }
    if (*have + BIG_RECORD > *cap) {
        char *nb = realloc(*buf, *cap = *have + BIG_RECORD);
        if (!nb) {
            wt->malformed = true;
            return true;
        }
        *buf = nb;
    }
    ssize_t n = read(fd, *buf + *have, *cap - *have);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return false;
    *have += (size_t)n;
    size_t used = handle_all(wt, *buf, *have);
    memmove(*buf, *buf + used, *have - used);
    *have -= used;
    uint64_t len;   /* a large record has begun: the rest of it goes to its own block */
    if (*have >= HEAD && !wt->malformed &&
        (memcpy(&len, *buf + sizeof(uint32_t), sizeof len), len >= BIG_RECORD)) {
        if (!(b->data = malloc((size_t)len))) {
            wt->malformed = true;
            return true;
        }
        memcpy(&b->type, *buf, sizeof b->type);
        b->len = (size_t)len;
        b->have = *have - HEAD;   /* less than len, or handle_all would have taken it */
        memcpy(b->data, *buf + HEAD, b->have);
        *have = 0;
    }
    return true;
}

bool nopi_watch_read(nopi_watch *wt, int fd)
{
    char *buf = NULL;
    size_t have = 0, cap = 0;
    big b = { NULL, 0, 0, 0 };
    bool in_time = true;
    while (!wt->done && !wt->malformed) {
        look_at_phase(wt);
        double left = wt->deadline - nopi_now();
        if (left <= 0) {
            in_time = false;
            break;
        }
        struct pollfd p = { fd, POLLIN, 0 };
        int pr = poll(&p, 1, (int)((left < LOOK ? left : LOOK) * 1000) + 1);
        if (pr > 0 && !read_some(wt, fd, &b, &buf, &have, &cap))
            break;   /* pr <= 0: EINTR, or time to look at the deadline */
    }
    if (wt->done && (have || b.data))
        wt->malformed = true;   /* bytes after DONE: nothing was asked for */
    look_at_phase(wt);   /* where it was when it ended */
    free(buf);
    free(b.data);
    return in_time;
}
