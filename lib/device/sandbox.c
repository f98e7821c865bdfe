/*
 * sandbox.c - the worker process: user code (kernels, shape functions, references) runs in a
 * child forked for the work, and the caller keeps the verdict.
 *
 * The child inherits the caller's memory copy-on-write, so the library and the inputs are
 * there without a copy; it makes an in-process device of its own (the caller's is only a
 * description), confines itself with seccomp (seccomp.c), does the work and sends records
 * back over a pipe: diagnostics as they happen, the phase it enters (so each phase gets its
 * own deadline), the results, and a last DONE record.  The parent trusts none of it: every
 * record's length and every count is checked, and a worker that dies, exits before DONE,
 * sends garbage or misses a deadline is reported as a device error naming the op and where
 * it was.  The worker is its own process group, dies with its parent, and is killed with
 * anything it left behind when the work ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

#define GRACE 2.0                  /* seconds a phase may overrun its cores' time limits */
#define MAX_RECORD (1ull << 36)    /* no record is larger than 64 GiB */

struct nopi_wire {
    int fd;
    pthread_mutex_t lock;          /* cores on several threads send diagnostics */
};

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

/* ---- the worker's side ------------------------------------------------------------------ */

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One record whose payload is a then b. */
static int put2(nopi_wire *w, uint32_t type, const void *a, size_t alen, const void *b,
                size_t blen)
{
    uint64_t len = (uint64_t)alen + blen;
    pthread_mutex_lock(&w->lock);
    int rc = write_all(w->fd, &type, sizeof type) == 0 &&
             write_all(w->fd, &len, sizeof len) == 0 &&
             (!alen || write_all(w->fd, a, alen) == 0) &&
             (!blen || write_all(w->fd, b, blen) == 0) ? 0 : -1;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int nopi_wire_put(nopi_wire *w, uint32_t type, const void *data, size_t len)
{
    return put2(w, type, data, len, NULL, 0);
}

int nopi_wire_put_run(nopi_wire *w, const nop_run_result *r)
{
    struct nopi_run_hdr h = { r->threads, r->printf_lost, r->stack_size, r->seconds };
    int rc = nopi_wire_put(w, NOPI_REC_RUN, &h, sizeof h);
    if (rc == 0 && r->output) {
        const nt_tensor *t = r->output;
        struct nopi_tensor_hdr th = { (int32_t)t->dtype, t->ndim, { 0 } };
        memcpy(th.sizes, t->sizes, sizeof th.sizes);
        rc = put2(w, NOPI_REC_OUTPUT, &th, sizeof th, t->data, (size_t)t->numel * t->itemsize);
    }
    if (rc == 0 && r->printf_text)
        rc = nopi_wire_put(w, NOPI_REC_PRINTF, r->printf_text, strlen(r->printf_text));
    if (rc == 0 && r->ncores)
        rc = nopi_wire_put(w, NOPI_REC_CORES, r->cores, (size_t)r->ncores * sizeof *r->cores);
    return rc;
}

/* The child: never returns. */
static _Noreturn void worker(nop_device *dev, int fd, nopi_work_fn *work, void *ctx)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    nopi_wire w = { fd, PTHREAD_MUTEX_INITIALIZER };
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    nop_device *cdev = nopi_device_for_worker(dev, &w);
    if (!cdev)
        done.rc = nopi_nomem(&done.err);
    else if (nopi_confine(fd, &done.err) != 0)
        done.rc = -1;
    else
        done.rc = work(cdev, ctx, &w, &done.err);
    nopi_wire_put(&w, NOPI_REC_DONE, &done, sizeof done);
    _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
}

/* ---- the parent's side ------------------------------------------------------------------ */

/* Makes every string of d end inside its array (the worker may have sent anything). */
static void terminate(nop_diag *d)
{
    d->file[sizeof d->file - 1] = d->where[sizeof d->where - 1] = '\0';
    d->msg[sizeof d->msg - 1] = d->detail[sizeof d->detail - 1] = '\0';
    if ((unsigned)d->severity > NOP_SEV_NOTE)
        d->severity = NOP_SEV_ERROR;
}

int nopi_run_take(nop_run_result *r, uint32_t type, const void *data, size_t len)
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
    case NOPI_REC_OUTPUT: {
        struct nopi_tensor_hdr h;
        if (len < sizeof h || r->output)
            return -1;
        memcpy(&h, data, sizeof h);
        if (h.dtype < 0 || h.dtype > NT_U8 || h.ndim < 0 || h.ndim > NOPI_MAX_DIMS)
            return -1;
        uint64_t bytes = nopi_dtype_size((nt_dtype)h.dtype);
        for (int i = 0; i < h.ndim; i++) {
            if (h.sizes[i] < 0 || (h.sizes[i] && bytes > MAX_RECORD / (uint64_t)h.sizes[i]))
                return -1;
            bytes *= (uint64_t)h.sizes[i];
        }
        if (bytes != len - sizeof h)
            return -1;
        nt_tensor *t = nopi_tensor_alloc((nt_dtype)h.dtype, h.ndim, h.sizes, false);
        if (!t)
            return -1;
        memcpy(t->data, (const char *)data + sizeof h, (size_t)bytes);
        r->output = t;
        return 0;
    }
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
    default:
        return 1;
    }
}

/* What the parent knows of a worker while it reads its records. */
typedef struct watch {
    nop_device *dev;
    const char *opname;
    double budget, timeout, deadline;
    char where[256];                /* the phase it is in, as diagnostics name it */
    bool done, malformed;
    struct nopi_done result;
    nopi_take_fn *take;
    void *ctx;
} watch;

/* Handles one complete record; -1 when it is malformed. */
static int handle(watch *wt, uint32_t type, const char *data, size_t len)
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
    case NOPI_REC_PHASE: {
        struct nopi_phase p;
        if (len != sizeof p)
            return -1;
        memcpy(&p, data, sizeof p);
        p.what[sizeof p.what - 1] = '\0';
        snprintf(wt->where, sizeof wt->where, "%s", p.what);
        int n = p.kind == NOPI_PHASE_CORES ? (p.ncores < 1 ? 1 : p.ncores > 64 ? 64 : p.ncores)
                                           : 1;
        wt->deadline = nopi_now() + (p.kind == NOPI_PHASE_OTHER ? wt->budget
                                                                : wt->timeout * n + GRACE);
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
        return wt->take(wt->ctx, type, data, len) == 0 ? 0 : -1;
    }
}

/* Reads records from fd until end of file or the deadline; false when the deadline passed. */
static bool read_records(watch *wt, int fd)
{
    char *buf = NULL;
    size_t have = 0, cap = 0, want = 65536;   /* want: bytes to make room for */
    bool in_time = true;
    for (;;) {
        double left = wt->deadline - nopi_now();
        if (left <= 0) {
            in_time = false;
            break;
        }
        struct pollfd p = { fd, POLLIN, 0 };
        int pr = poll(&p, 1, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            continue;
        if (have + want > cap) {   /* room for the record in progress, at once */
            char *nb = realloc(buf, cap = have + want);
            if (!nb) {
                wt->malformed = true;
                break;
            }
            buf = nb;
        }
        ssize_t n = read(fd, buf + have, cap - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
        size_t used = 0;
        for (;;) {   /* every complete record in the buffer */
            uint32_t type;
            uint64_t len;
            if (have - used < sizeof type + sizeof len)
                break;
            memcpy(&type, buf + used, sizeof type);
            memcpy(&len, buf + used + sizeof type, sizeof len);
            if (len > MAX_RECORD) {
                wt->malformed = true;
                break;
            }
            if (have - used - sizeof type - sizeof len < len)
                break;
            if (handle(wt, type, buf + used + sizeof type + sizeof len, (size_t)len) != 0)
                wt->malformed = true;
            used += sizeof type + sizeof len + (size_t)len;
        }
        if (wt->malformed)
            break;
        memmove(buf, buf + used, have - used);
        have -= used;
        want = 65536;
        uint64_t len;   /* a record in progress: room for all of it, so one read can fill it */
        if (have >= sizeof(uint32_t) + sizeof len) {
            memcpy(&len, buf + sizeof(uint32_t), sizeof len);
            size_t total = sizeof(uint32_t) + sizeof len + (size_t)len;
            if (total > have + want)
                want = total - have;
        }
    }
    free(buf);
    return in_time;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "segmentation fault";
    case SIGBUS: return "bus error";
    case SIGFPE: return "arithmetic exception";
    case SIGILL: return "illegal instruction";
    case SIGABRT: return "abort";
    case SIGKILL: return "killed (out of memory?)";
    case SIGSYS: return "bad system call";
    default: return "a signal";
    }
}

int nopi_sandbox_call(nop_device *dev, const char *opname, double budget, nopi_work_fn *work,
                      void *work_ctx, nopi_take_fn *take, void *take_ctx, nop_error *err)
{
    nopi_device_reap(dev, 0);   /* the last worker, if it is still there */
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot make a pipe to the device "
                         "process: %s", strerror(errno));
    fflush(NULL);   /* what the caller buffered must not be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot start the device process: "
                         "%s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        worker(dev, fds[1], work, work_ctx);
    }
    close(fds[1]);
    setpgid(pid, pid);   /* as the child does: whichever runs first */
    nop_device_opts o = nopi_device_opts(dev);
    watch wt = { dev, opname, budget, o.timeout, nopi_now() + budget, "", false, false,
                 { 0 }, take, take_ctx };
    snprintf(wt.where, sizeof wt.where, "%s", opname);
    bool in_time = read_records(&wt, fds[0]);
    close(fds[0]);
    int status = 0;
    if (in_time && !wt.malformed && wt.done) {
        /* The work is over and its result in hand: end the worker and what it may have left
         * in its group, and let the kernel tear it down while the caller goes on; it is
         * reaped by the device's next call or nop_device_free. */
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        nopi_device_reap(dev, pid);
    } else {
        kill(-pid, SIGKILL);
        if (!in_time || wt.malformed)
            kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        kill(-pid, SIGKILL);   /* anything the work left behind in its group */
    }
    if (!in_time) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "timeout: it did not finish within its "
                  "time limit and was stopped");
        nopi_detail(err, "look for a loop that never ends, or give it more time with "
                    "--timeout SECONDS");
    } else if (wt.malformed) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "the device process sent a malformed "
                  "report: kernel code overwrote the runtime's memory?");
        nopi_detail(err, "run with --memcheck to find a bad write at its source line");
    } else if (!wt.done && WIFSIGNALED(status)) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "the device process died: %s (signal %d)",
                  signal_name(WTERMSIG(status)), WTERMSIG(status));
        nopi_detail(err, "kernel code wrote where it must not (outside its tensors?) and "
                    "broke the runtime; run with --memcheck to find the write at its line");
    } else if (!wt.done) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "user code ended the device process "
                  "(exit status %d) before the op finished", WEXITSTATUS(status));
        nopi_detail(err, "kernels, shape functions and references must return, not exit");
    } else {
        if (wt.result.rc != 0 && err)
            *err = wt.result.err;
        return wt.result.rc == 0 ? 0 : -1;
    }
    if (err && !err->diag.where[0])
        snprintf(err->diag.where, sizeof err->diag.where, "%s", wt.where);
    return -1;
}
