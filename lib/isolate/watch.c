/*
 * watch.c - the parent's side of a request to a worker process (see sandbox.h): reading the
 * records it sends back, under deadlines of the parent's own.
 *
 * Deadlines come from the parent's clock and the request alone: a request may take its
 * budget plus, for each run it may make, every phase of the run its full time (the shape
 * function its timeout, the cores theirs one after another, with GRACE); that is the
 * request's limit, fixed when it is sent.  The phase the worker says it is in, on a page it
 * shares with the parent (looked at every LOOK seconds and whenever records come), can only
 * bring the deadline earlier (an honest kernel that spins is stopped at its phase's end, not
 * the request's) and choose, among the op's own places, where a failure is said to be:
 * nothing written there postpones anything.  A page changed more often than the request's
 * runs have phases is a malformed report at once (each seen change counts).
 *
 * Records are bounded before anything is allocated for them: no record is larger than what
 * its type can hold for the request (record_bound: a run's printf text what the device's ring
 * holds, ...; an output's bytes MAX_RECORD, and half the memory neuronop may have), and a
 * large one is read into a block that grows with the bytes that actually came, so a header
 * that only claims gigabytes costs nothing.
 * A record of a bad length, one after DONE, or a take function's refusal makes the request's
 * report malformed.  A request ends at DONE (the verdict is still the parent's), or at the
 * end of the pipe without it (the worker died: sandbox.c asks how).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "device/trace.h"

#define GRACE 2.0                  /* seconds the cores or the loading may overrun their limits */
#define MAX_RECORD (1ull << 36)    /* no record is larger than 64 GiB */
#define GROW (1u << 20)            /* a large record's block grows by this much at least */
#define BIG_RECORD 65536           /* records from this size are read into a block of their own */
#define LOOK 0.1                   /* seconds between looks at the worker's phase page */
/* Diagnostics a run can genuinely send (devdiag.c and its callers): each core, the shape
 * function's and the reference's included, warns at most once of its streams, of tcm_malloc
 * returning NULL and of TCM left allocated, and reports its failure; each tensor (the
 * arguments and the output) is warned of once for incoherent access; one warning says that
 * printf from other cores was dropped; a test passes on its case's error.  A request may
 * send that for each of its runs, and never more than MAX_DIAGS: the rest are counted. */
#define DIAGS_PER_CORE 4
#define DIAGS_PER_RUN(ncores) (DIAGS_PER_CORE * ((ncores) + 2) + NOP_MAX_ARGS + 1 + 2)
#define MAX_DIAGS 1000

/* Indents each line of s (a NUL-terminated string in an array of size bytes) by two spaces,
 * cutting what no longer fits. */
static void indent_lines(char *s, size_t size)
{
    char out[sizeof ((nop_diag *)0)->detail];
    size_t n = 0;
    for (const char *p = s; *p && n + 1 < size && n + 1 < sizeof out; p++) {
        if (p == s || p[-1] == '\n')
            for (int k = 0; k < 2 && n + 1 < size; k++)
                out[n++] = ' ';
        if (n + 1 < size)
            out[n++] = *p;
    }
    out[n] = '\0';
    memcpy(s, out, n + 1);
}

void nopi_diag_indent(nop_diag *d)
{
    indent_lines(d->detail, sizeof d->detail);
}

void nopi_diag_terminate(nop_diag *d)
{
    d->file[sizeof d->file - 1] = d->where[sizeof d->where - 1] = '\0';
    d->msg[sizeof d->msg - 1] = d->detail[sizeof d->detail - 1] = '\0';
    /* a line of the worker's own under its message could pass for neuronop's (`ok    name`,
     * `1 passed, 0 failed`): the one-line parts show a newline as '?', and the detail's
     * lines (a source excerpt, a hint: several lines) are indented under the message (before
     * they are made plain text: a character the cut splits becomes '?') */
    indent_lines(d->detail, sizeof d->detail);
    /* shown on the terminal and written into JUnit and JSON: no escape sequence, carriage
     * return or byte that is not UTF-8 of a worker's choosing */
    char *line[] = { d->file, d->where, d->msg };
    for (size_t i = 0; i < sizeof line / sizeof line[0]; i++)
        nopi_line_clean(line[i]);
    nopi_text_clean(d->detail);
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
        if (wt->diags_left == 0) {   /* more than its runs can send: counted, said once */
            wt->diags_dropped++;
            return 0;
        }
        wt->diags_left--;
        memcpy(&d, data, sizeof d);
        nopi_diag_terminate(&d);
        nop_device_opts o = nopi_device_opts(wt->dev);
        if (o.diag)
            o.diag(o.diag_ctx, &d);
        return 0;
    }
    case NOPI_REC_DONE:
        if (len != sizeof wt->result || (wt->take && wt->take(wt->ctx, type, NULL, 0, NULL) != 0))
            return -1;
        memcpy(&wt->result, data, sizeof wt->result);
        nopi_diag_terminate(&wt->result.err.diag);
        if (wt->result.trapped != NOPI_TRAP_NONE) {
            nopi_done_trapped(&wt->result);
            nopi_diag_indent(&wt->result.err.diag);   /* its detail is the parent's, new */
        }
        wt->done = true;
        return 0;
    case NOPI_REC_PRINTF_LOST:   /* the parent's own word, after a worker died */
        return -1;
    default:
        return wt->take(wt->ctx, type, data, len, own) == 0 ? 0 : -1;
    }
}

/* Whether the worker's name for where it is may be shown: the op's own name, alone or
 * followed by ": " and printable text (a forged page can name no other op or thing). */
static bool believable(const char *what, const char *op)
{
    size_t n = strlen(op);
    if (strncmp(what, op, n) != 0 || (what[n] && strncmp(what + n, ": ", 2) != 0))
        return false;
    for (const char *p = what; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            return false;
    return true;
}

/* Reads the worker's phase page when it has changed: the deadline becomes the phase's,
 * counted from when the worker says the phase began (never later than now), but never later
 * than the request's limit.  A page being written, or written to meanwhile, is read at the
 * next look. */
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
    if (wt->phases_left == 0) {   /* more than its runs have: forged (it would gain nothing) */
        wt->malformed = true;
        return;
    }
    if (wt->phases_left > 0)
        wt->phases_left--;
    what[sizeof what - 1] = '\0';
    if (kind == NOPI_PHASE_LOAD)   /* a spare loads before it knows its request's op */
        snprintf(wt->where, sizeof wt->where, "%s: loading the library", wt->op);
    else
        snprintf(wt->where, sizeof wt->where, "%s", believable(what, wt->op) ? what : wt->op);
    double now = nopi_now();
    if (!(start <= now) || start < now - wt->limit_s)
        start = now;   /* in the future, long ago, or not a number */
    /* a shape function is timed here alone, so as a core's watchdog times a kernel: no grace
     * (which let `--timeout 1` spin 3 s); the cores' own watchdogs stop them first and say
     * which core, so the parent's deadline is only their backstop; loading (dlopen, all the
     * libraries' constructors) is not the user's function alone, and keeps a grace */
    /* a run's cores are as many as the phase says (one for a reference or a single-core
     * op), never more than the request's */
    if (ncores < 1 || ncores > wt->ncores)
        ncores = wt->ncores;
    double d = kind == NOPI_PHASE_SHAPE ? start + wt->timeout
               : kind == NOPI_PHASE_LOAD ? start + wt->timeout + GRACE
               : kind == NOPI_PHASE_CORES ? start + wt->timeout * ncores + GRACE
                                          : wt->limit;
    wt->deadline = d < wt->limit ? d : wt->limit;
}

#define HEAD (sizeof(uint32_t) + sizeof(uint64_t))   /* a record's type and length */

/* The most bytes a record of this type can hold for this request, which a header claiming
 * more is refused by before anything is allocated: a fixed-size record its struct's size, a
 * run's printf text what the device's ring holds (nopi_ring_text: the profile's
 * printf_buffer, at most NOPI_PHASE_PRINTF), its per-core reports one per core it may use,
 * a core's trace its header and the spans a core keeps (NOPI_TRACE_SPANS); an output's
 * bytes and a caller's own records only the generic bound (max_record). */
static uint64_t record_bound(const nopi_watch *wt, uint32_t type)
{
    uint64_t b = wt->max_record;   /* an output's bytes, a caller's own records */
    switch (type) {
    case NOPI_REC_DIAG:
        b = sizeof(nop_diag);
        break;
    case NOPI_REC_DONE:
        b = sizeof(struct nopi_done);
        break;
    case NOPI_REC_OUTPUT:
        b = sizeof(struct nopi_tensor_hdr);
        break;
    case NOPI_REC_PRINTF:
        b = wt->dev ? (uint64_t)nopi_device_profile(wt->dev)->printf_buffer : NOPI_PHASE_PRINTF;
        b = b < NOPI_PHASE_PRINTF ? b : NOPI_PHASE_PRINTF;
        break;
    case NOPI_REC_CORES:
        b = (uint64_t)(wt->ncores > 0 ? wt->ncores : NOPI_MAX_CORES) * sizeof(nop_core_report);
        break;
    case NOPI_REC_RUN:
        b = sizeof(struct nopi_run_hdr);
        break;
    case NOPI_REC_TRACE:
        b = sizeof(struct nopi_trace_hdr) + NOPI_TRACE_SPANS * sizeof(nopi_trace_span);
        break;
    case NOPI_REC_PRINTF_LOST:   /* the parent's own word: never a worker's */
        b = 0;
        break;
    }
    return b < wt->max_record ? b : wt->max_record;
}

/* A record of more than this makes the request read its cgroups' memory limit, which costs
 * about 80 us (too much for every `neuronop run`, nothing beside such a record). */
#define CGROUP_CHECK_FROM (64ull << 20)

/* Lowers the request's generic bound to half its cgroups' memory limit, when that is less:
 * a container given a limit (docker --memory) sees the host's memory in sysconf, and a
 * worker's 3 GB output on a host of 16 GB in a container of 2 GB had the OOM killer end
 * neuronop, where a message should end the run. */
static void bound_by_cgroup(nopi_watch *wt)
{
    wt->cgroup_checked = true;
    double limit = nopi_cgroup_memory_limit("");
    double share = limit / 2 / (wt->held > 1 ? wt->held : 1);
    if (limit > 0 && (uint64_t)share < wt->max_record)
        wt->max_record = (uint64_t)share;
}

/* Handles the complete records at the start of buf[0, have); returns the bytes used. */
static size_t handle_all(nopi_watch *wt, const char *buf, size_t have)
{
    size_t used = 0;
    while (have - used >= HEAD && !wt->malformed) {
        uint32_t type;
        uint64_t len;
        memcpy(&type, buf + used, sizeof type);
        memcpy(&len, buf + used + sizeof type, sizeof len);
        if (len > CGROUP_CHECK_FROM / (wt->held > 1 ? (unsigned)wt->held : 1u) &&
            !wt->cgroup_checked)   /* (held's share of it: a reviewer's find) */
            bound_by_cgroup(wt);
        if (len > record_bound(wt, type)) {
            wt->malformed = true;
            if (type == NOPI_REC_OUTPUT_DATA)   /* an honest op may make one that large */
                wt->oversized = len;
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
 * keep: a run's output is not copied again).  The block grows as bytes come. */
typedef struct big {
    char *data;
    uint32_t type;
    size_t len, have, cap;
} big;

/* Makes room in b for more of its record; false on no memory. */
static bool grow(big *b)
{
    if (b->cap > b->have)
        return true;
    size_t want = b->cap * 2 > b->cap + GROW ? b->cap * 2 : b->cap + GROW;
    if (want > b->len)
        want = b->len;
    /* the first block is mapped as it should be (huge pages when large: a pipe's bytes
     * cost a fault a page twice otherwise, the kernel's write and the first read); growing
     * keeps the pages it has */
    char *nd = b->data ? realloc(b->data, want) : nopi_host_block(want);
    if (!nd)
        return false;
    if (b->data)
        nopi_prefault(nd + b->have, want - b->have);
    b->data = nd;
    b->cap = want;
    return true;
}

/* Reads from fd: into the large record in progress if there is one, else into buf.  1 when
 * bytes came, 0 when none were there, -1 at end of file or on an error. */
static int read_some(nopi_watch *wt, int fd, big *b, char **buf, size_t *have, size_t *cap)
{
    if (b->len) {
        if (!grow(b)) {
            wt->malformed = true;
            return 1;
        }
        ssize_t n = read(fd, b->data + b->have, b->cap - b->have);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return 0;
        if (n <= 0)
            return -1;
        if ((b->have += (size_t)n) == b->len) {
            void *own = b->data;
            if (handle(wt, b->type, b->data, b->len, &own) != 0)
                wt->malformed = true;
            free(own);
            *b = (big){ NULL, 0, 0, 0, 0 };
        }
        return 1;
    }
    if (*have + BIG_RECORD > *cap) {
        char *nb = realloc(*buf, *cap = *have + BIG_RECORD);
        if (!nb) {
            wt->malformed = true;
            return 1;
        }
        *buf = nb;
    }
    ssize_t n = read(fd, *buf + *have, *cap - *have);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)
        return -1;
    *have += (size_t)n;
    size_t used = handle_all(wt, *buf, *have);
    memmove(*buf, *buf + used, *have - used);
    *have -= used;
    uint64_t len;   /* a large record has begun: the rest of it goes to its own block */
    if (*have >= HEAD && !wt->malformed &&
        (memcpy(&len, *buf + sizeof(uint32_t), sizeof len), len >= BIG_RECORD)) {
        memcpy(&b->type, *buf, sizeof b->type);
        b->len = (size_t)len;   /* checked against its type's bound by handle_all */
        b->have = b->cap = 0;
        size_t part = *have - HEAD;   /* less than len, or handle_all would have taken it */
        while (b->cap < part)
            if (!grow(b)) {
                wt->malformed = true;
                return 1;
            }
        if (part)   /* else no block yet: it comes with the first bytes */
            memcpy(b->data, *buf + HEAD, part);
        b->have = part;
        *have = 0;
    }
    return 1;
}

uint64_t nopi_watch_record_bound(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t half = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 2 : MAX_RECORD;
    return half < MAX_RECORD ? half : MAX_RECORD;
}

void nopi_watch_start(nopi_watch *wt)
{
    if (!wt->max_record)
        wt->max_record = nopi_watch_record_bound();
    wt->limit_s = wt->budget + (wt->runs > 0 ? wt->runs * (wt->timeout * (wt->ncores + 1) +
                                                           2 * GRACE) : 0);
    wt->limit = wt->deadline = nopi_now() + wt->limit_s;
    /* a run has four phases (its shape function, making its output, its cores, its end),
     * and the request two more: loading the library, and its end */
    wt->phases_left = wt->runs > 0 && wt->runs < INT_MAX / 5 ? 4 * wt->runs + 2 : -1;
    long per_run = DIAGS_PER_RUN(wt->ncores > 0 && wt->ncores <= NOPI_MAX_CORES ? wt->ncores
                                                                                : NOPI_MAX_CORES);
    wt->diags_left = wt->runs > 0 && wt->runs < MAX_DIAGS / per_run ? wt->runs * per_run
                     : wt->runs > 0 ? MAX_DIAGS : per_run;
    wt->diags_dropped = 0;
    snprintf(wt->where, sizeof wt->where, "%s", wt->op);
}

bool nopi_watch_read(nopi_watch *wt, int fd)
{
    char *buf = NULL;
    size_t have = 0, cap = 0;
    big b = { NULL, 0, 0, 0, 0 };
    bool in_time = true;
    while (!wt->malformed && !wt->done) {
        look_at_phase(wt);
        double left = wt->deadline - nopi_now();
        if (left <= 0) {
            in_time = false;
            break;
        }
        struct pollfd p = { fd, POLLIN, 0 };
        int pr = poll(&p, 1, (int)((left < LOOK ? left : LOOK) * 1000) + 1);
        if (pr <= 0)
            continue;   /* EINTR, or time to look at the deadline */
        if (read_some(wt, fd, &b, &buf, &have, &cap) < 0)
            break;
    }
    if (wt->done && (have || b.len))
        wt->malformed = true;   /* bytes after DONE, or a record cut short */
    look_at_phase(wt);   /* where it was when it ended */
    if (wt->diags_dropped && wt->dev) {
        nop_device_opts o = nopi_device_opts(wt->dev);
        nop_diag d = { .severity = NOP_SEV_WARNING };
        snprintf(d.where, sizeof d.where, "%s", wt->op);
        snprintf(d.msg, sizeof d.msg, "%ld more diagnostics from the device process were not "
                 "shown (a request sends at most what its runs can)", wt->diags_dropped);
        if (o.diag)
            o.diag(o.diag_ctx, &d);
    }
    free(buf);
    free(b.data);
    return in_time;
}
