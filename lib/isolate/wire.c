/*
 * wire.c - the records a worker process sends its parent (see sandbox.h): writing them on
 * the worker's side, and decoding a run's records on the parent's side.
 *
 * A record is a uint32 type, a uint64 length and its payload.  The worker writes whole
 * records under the wire's lock (cores on several threads send diagnostics).  The parent
 * believes nothing it reads: every length, count, dtype, core number and span kind is checked
 * before it is used, and a record that fails a check is malformed (the work fails).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server.h"
#include "device/trace.h"

#define MAX_BYTES (1ull << 36)     /* no tensor sent is larger than 64 GiB */

/* The scalars of a run's result. */
struct nopi_run_hdr {
    int32_t threads, printf_lost;
    uint64_t stack_size;
    double seconds;
};

/* An output tensor's description; its data follows. */
struct nopi_tensor_hdr {
    int32_t dtype, ndim;
    int64_t sizes[NOPI_MAX_DIMS];
};

/* One core's trace recording; its spans follow. */
struct nopi_trace_hdr {
    int32_t core, nspans;
    int64_t total[NOPI_SPAN_KINDS];
    nopi_trace_point start, end;
};

/* ---- the worker's side ------------------------------------------------------------------ */

int nopi_fd_all(int fd, void *data, size_t len, bool writing)
{
    char *p = data;
    while (len) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One record whose payload is a then b, in one write where the pipe takes it whole: each
 * write wakes the parent, and a run sends ten records. */
static int put2(nopi_wire *w, uint32_t type, const void *a, size_t alen, const void *b,
                size_t blen)
{
    uint64_t len = (uint64_t)alen + blen;
    char head[sizeof type + sizeof len];
    memcpy(head, &type, sizeof type);
    memcpy(head + sizeof type, &len, sizeof len);
    struct iovec iov[3] = { { head, sizeof head }, { (void *)a, alen }, { (void *)b, blen } };
    struct iovec *v = iov;
    int n = 3;
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
    if (len < 65536)
        return nopi_wire_put(w, type, data, len);
    uint64_t len64 = len;
    char head[sizeof type + sizeof len64];
    memcpy(head, &type, sizeof type);
    memcpy(head + sizeof type, &len64, sizeof len64);
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

void nopi_wire_retire(nopi_wire *w)
{
    w->retire = true;
}

int nopi_wire_put_run(nopi_wire *w, const nop_run_result *r)
{
    struct nopi_run_hdr h = { r->threads, r->printf_lost, r->stack_size, r->seconds };
    int rc = nopi_wire_put(w, NOPI_REC_RUN, &h, sizeof h);
    if (rc == 0 && r->output) {
        const nt_tensor *t = r->output;
        struct nopi_tensor_hdr th = { (int32_t)t->dtype, t->ndim, { 0 } };
        memcpy(th.sizes, t->sizes, sizeof th.sizes);
        rc = nopi_wire_put(w, NOPI_REC_OUTPUT, &th, sizeof th);
        if (rc == 0)
            rc = put_pages(w, NOPI_REC_OUTPUT_DATA, t->data,
                               (size_t)t->numel * t->itemsize);
    }
    if (rc == 0 && r->printf_text)
        rc = nopi_wire_put(w, NOPI_REC_PRINTF, r->printf_text, strlen(r->printf_text));
    if (rc == 0 && r->ncores)
        rc = nopi_wire_put(w, NOPI_REC_CORES, r->cores, (size_t)r->ncores * sizeof *r->cores);
    for (int i = 0; rc == 0 && r->trace && i < r->trace->ncores; i++) {
        const nopi_trace *t = &r->trace->cores[i];
        struct nopi_trace_hdr th = { i, t->nspans, { 0 }, t->start, t->end };
        memcpy(th.total, t->total, sizeof th.total);
        rc = put2(w, NOPI_REC_TRACE, &th, sizeof th, t->spans,
                  (size_t)t->nspans * sizeof *t->spans);
    }
    return rc;
}

/* ---- requests (both sides) ------------------------------------------------------------- */

/* Sends a request (its length, then its bytes, with descriptor pass attached unless it is
 * -1) on socket fd; -1 when the other end is gone. */
int nopi_send_request(int fd, const void *req, size_t len, int pass)
{
    uint64_t n = len;
    struct iovec iov[2] = { { &n, sizeof n }, { (void *)req, len } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
    if (pass >= 0) {
        memset(&u, 0, sizeof u);
        m.msg_control = u.buf;
        m.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass, sizeof pass);
    }
    size_t left = sizeof n + len;
    while (left) {
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        m.msg_control = NULL;   /* the descriptor went with the first bytes */
        m.msg_controllen = 0;
        left -= (size_t)k;
        while (k > 0) {   /* skip what was sent */
            size_t step = (size_t)k < m.msg_iov->iov_len ? (size_t)k : m.msg_iov->iov_len;
            m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + step;
            m.msg_iov->iov_len -= step;
            k -= (ssize_t)step;
            if (!m.msg_iov->iov_len && m.msg_iovlen > 1)
                m.msg_iov++, m.msg_iovlen--;
        }
    }
    return 0;
}

/* Reads one request (its length, then its bytes) from socket fd into *req, and the
 * descriptor that came with it into *got (-1: none); false when the sender is gone. */
bool nopi_read_request(int fd, char **req, uint64_t *len, int *got)
{
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
    struct iovec iov = { len, sizeof *len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf };
    ssize_t n;
    *got = -1;
    while ((n = recvmsg(fd, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(got, CMSG_DATA(c), sizeof *got);
    if (n != (ssize_t)sizeof *len || *len > MAX_REQUEST)
        return false;
    char *nr = realloc(*req, *len ? (size_t)*len : 1);
    if (!nr)
        return false;
    *req = nr;
    return nopi_fd_all(fd, nr, (size_t)*len, false) == 0;
}

/* ---- the parent's side ------------------------------------------------------------------ */

/* The output's description: a tensor of zeros until its data comes. */
static int take_output(nop_run_result *r, const void *data, size_t len)
{
    struct nopi_tensor_hdr h;
    if (len != sizeof h || r->output)
        return -1;
    memcpy(&h, data, sizeof h);
    if (h.dtype < 0 || h.dtype > NT_U8 || h.ndim < 0 || h.ndim > NOPI_MAX_DIMS)
        return -1;
    uint64_t bytes = nopi_dtype_size((nt_dtype)h.dtype);
    for (int i = 0; i < h.ndim; i++) {
        if (h.sizes[i] < 0 || (h.sizes[i] && bytes > MAX_BYTES / (uint64_t)h.sizes[i]))
            return -1;
        bytes *= (uint64_t)h.sizes[i];
    }
    return (r->output = nopi_tensor_alloc((nt_dtype)h.dtype, h.ndim, h.sizes, false)) ? 0 : -1;
}

/* The output's bytes: the block itself when it may be kept, else a copy.  (A worker that
 * sends none, or sends them twice, can only make its own output wrong, as it could anyway.) */
static int take_output_data(nop_run_result *r, const void *data, size_t len, void **own)
{
    nt_tensor *t = r->output;
    if (!t || len != (size_t)t->numel * t->itemsize)
        return -1;
    if (own && *own && len) {
        free(t->data);
        t->data = *own;
        *own = NULL;
    } else {
        memcpy(t->data, data, len);
    }
    return 0;
}

/* A core's trace: cores come in order, after the run's per-core reports. */
static int take_trace(nop_run_result *r, const void *data, size_t len)
{
    struct nopi_trace_hdr h;
    if (len < sizeof h || !r->cores)
        return -1;
    memcpy(&h, data, sizeof h);
    nop_trace *t = r->trace;
    if (!t) {
        if (!(t = r->trace = calloc(1, sizeof *t)) ||
            !(t->cores = calloc((size_t)r->ncores, sizeof *t->cores)))
            return -1;
    }
    if (h.core != t->ncores || h.core >= r->ncores || h.nspans < 0 ||
        h.nspans > NOPI_TRACE_SPANS || len - sizeof h != (size_t)h.nspans * sizeof(nopi_trace_span))
        return -1;
    nopi_trace *c = &t->cores[h.core];
    memcpy(c->total, h.total, sizeof c->total);
    c->start = h.start;
    c->end = h.end;
    if (h.nspans && !(c->spans = malloc(len - sizeof h)))
        return -1;
    memcpy(c->spans, (const char *)data + sizeof h, len - sizeof h);
    c->nspans = h.nspans;
    t->ncores++;
    for (int s = 0; s < c->nspans; s++)   /* kinds index the writer's tables */
        if (c->spans[s].kind < 0 || c->spans[s].kind >= NOPI_SPAN_KINDS)
            return -1;
    return 0;
}

int nopi_run_take(nop_run_result *r, uint32_t type, const void *data, size_t len, void **own)
{
    switch (type) {
    case NOPI_REC_RUN: {
        struct nopi_run_hdr h;
        if (len != sizeof h)
            return -1;
        memcpy(&h, data, sizeof h);
        r->threads = h.threads;
        r->printf_lost = h.printf_lost != 0;
        r->stack_size = (size_t)h.stack_size;
        r->seconds = h.seconds;
        return 0;
    }
    case NOPI_REC_OUTPUT:
        return take_output(r, data, len);
    case NOPI_REC_OUTPUT_DATA:
        return take_output_data(r, data, len, own);
    case NOPI_REC_PRINTF:
        if (r->printf_text || !(r->printf_text = malloc(len + 1)))
            return -1;
        memcpy(r->printf_text, data, len);
        r->printf_text[len] = '\0';
        return 0;
    case NOPI_REC_CORES: {
        size_t n = len / sizeof *r->cores;
        if (r->cores || len % sizeof *r->cores || n == 0 || n > NOPI_MAX_CORES ||
            !(r->cores = malloc(len)))
            return -1;
        memcpy(r->cores, data, len);
        r->ncores = (int)n;
        return 0;
    }
    case NOPI_REC_TRACE:
        return take_trace(r, data, len);
    default:
        return 1;
    }
}
