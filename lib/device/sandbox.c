/*
 * sandbox.c - the fork server: user code (kernels, shape functions, references) runs in a
 * worker process that serves request after request, and the caller keeps the verdict.
 *
 * The worker is forked on the first request, so it inherits the caller's memory copy-on-write
 * (the library, the inputs) without a copy.  It becomes its own process group, dies with its
 * parent, closes every descriptor but its two channels, points its standard input, output
 * and error at /dev/null (a kernel cannot write to the terminal or into neuronop's own
 * output), makes an in-process device of its own, confines itself with seccomp (seccomp.c)
 * and then loops: read a request from its socket, serve it, send records over its pipe
 * (wire.c): diagnostics as they happen, the results and a last DONE; the phase it is in (so
 * each phase gets its own deadline) goes on a page it shares with the parent.  The parent
 * reads them (watch.c) and trusts none of it: a worker that dies,
 * exits before DONE, sends garbage or misses a deadline fails that request as a device error
 * naming the op and where it was; its process group is killed and the next request forks a
 * new worker.  A worker whose request failed is retired the same way, in case the failure
 * left it broken.  Requests of one server come from one library, so a kernel that outlives its
 * request can reach nothing another author's code would see.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

#define MAX_REQUEST (1u << 20)     /* requests are small descriptions of work */
#define PIPE_BYTES (1 << 20)       /* a run's output fits the pipe: no round trips */

struct nopi_server {
    nop_device *dev;
    nopi_serve_fn *serve;
    void *ctx;
    struct nopi_phase_page *phase;   /* MAP_SHARED: the worker's current phase */
    pid_t pid;                     /* the worker, 0 when none is running */
    int req_fd, rec_fd;            /* the parent's ends: requests out, records in */
};

/* ---- the worker's side ------------------------------------------------------------------ */

/* Gives the worker its two channels as descriptors 3 (requests) and 4 (records), closes all
 * the others it inherited (another device's channels among them) and points 0, 1 and 2 at
 * /dev/null.  Under AddressSanitizer, 2 stays: the sanitizer reports there. */
static int settle_fds(int *req, int *rec)
{
    int r = fcntl(*req, F_DUPFD, 16), w = fcntl(*rec, F_DUPFD, 16);
    if (r < 0 || w < 0 || dup2(r, 3) != 3 || dup2(w, 4) != 4)
        return -1;
    *req = 3;
    *rec = 4;
    if (syscall(SYS_close_range, 5u, ~0u, 0u) != 0)
        for (int fd = 5; fd < 1024; fd++)
            close(fd);
    int null = open("/dev/null", O_RDWR);
    if (null < 0)
        return -1;
#ifdef __SANITIZE_ADDRESS__
    int last = 1;
#else
    int last = 2;
#endif
    for (int fd = 0; fd <= last; fd++)
        if (dup2(null, fd) != fd)
            return -1;
    if (null > 2)
        close(null);
    return 0;
}

/* The worker: serves requests until its parent closes the socket.  Never returns. */
static _Noreturn void worker(nopi_server *s, pid_t parent, int req_fd, int rec_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)   /* the parent died before the line above */
        _exit(0);
    nopi_wire w = { rec_fd, PTHREAD_MUTEX_INITIALIZER, false, s->phase };
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    nop_device *cdev = NULL;
    if (settle_fds(&req_fd, &w.fd) != 0)
        done.rc = nopi_fail(&done.err, NOP_ERR_DEVICE, NULL, 0, 0, "cannot set up the "
                            "device process's descriptors: %s", strerror(errno));
    else if (!(cdev = nopi_device_for_worker(s->dev, &w)))
        done.rc = nopi_nomem(&done.err);
    else if (nopi_confine(w.fd, &done.err) != 0)
        done.rc = -1;
    char *req = NULL;
    for (;;) {
        uint64_t len;
        if (nopi_fd_all(req_fd, &len, sizeof len, false) != 0 || len > MAX_REQUEST)
            _exit(0);
        char *nr = realloc(req, len ? (size_t)len : 1);
        if (!nr || nopi_fd_all(req_fd, nr, (size_t)len, false) != 0)
            _exit(0);
        req = nr;
        if (done.rc == 0)   /* else: the set-up failed, and this answer says why */
            done.rc = s->serve(cdev, s->ctx, req, (size_t)len, &w, &done.err);
        done.retire = done.rc != 0 || w.retire;
        nopi_wire_put(&w, NOPI_REC_DONE, &done, sizeof done);
        if (done.retire)
            _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
        memset(&done, 0, sizeof done);
    }
}

/* ---- the parent's side ------------------------------------------------------------------ */

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "segmentation fault";
    case SIGBUS: return "bus error";
    case SIGFPE: return "arithmetic exception";
    case SIGILL: return "illegal instruction";
    case SIGABRT: return "abort";
    case SIGKILL: return "killed";
    case SIGSYS: return "bad system call";
    default: return "a signal";
    }
}

/* What to do about a worker that died of sig. */
static const char *signal_hint(int sig)
{
    switch (sig) {
    case SIGSEGV:
    case SIGBUS:
        return "kernel code wrote where it must not (outside its tensors?) and broke the "
               "runtime; run with --memcheck to find the write at its line";
    case SIGKILL:
        return "something outside killed it, or the host ran out of memory (look for a huge "
               "allocation)";
    case SIGSYS:
        return "user code made a system call through another ABI (int 0x80?), which the "
               "device does not have";
    default:
        return "user code raised the signal itself, or broke the runtime so that it did; run "
               "with --memcheck to find a bad write at its line";
    }
}

int nopi_server_new(nopi_server **out, nop_device *dev, nopi_serve_fn *serve, void *ctx,
                    nop_error *err)
{
    nopi_server *s = calloc(1, sizeof *s);
    if (!(*out = s))
        return nopi_nomem(err);
    *s = (nopi_server){ dev, serve, ctx, NULL, 0, -1, -1 };
    s->phase = mmap(NULL, sizeof *s->phase, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
    if (s->phase == MAP_FAILED) {
        free(s);
        *out = NULL;
        return nopi_nomem(err);
    }
    return 0;
}

/* Forks the worker; 0, or -1 with err filled. */
static int start(nopi_server *s, nop_error *err)
{
    nopi_device_reap(s->dev, 0);   /* the last worker, if it is still there */
    int req[2], rec[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, req) != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot make a socket to the device "
                         "process: %s", strerror(errno));
    if (pipe2(rec, O_CLOEXEC) != 0) {
        close(req[0]);
        close(req[1]);
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot make a pipe to the device "
                         "process: %s", strerror(errno));
    }
    fcntl(rec[1], F_SETPIPE_SZ, PIPE_BYTES);   /* best effort: smaller is only slower */
    fflush(NULL);   /* what the caller buffered must not be written twice */
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        close(req[0]);
        close(rec[0]);
        worker(s, parent, req[1], rec[1]);
    }
    close(req[1]);
    close(rec[1]);
    if (pid < 0) {
        close(req[0]);
        close(rec[0]);
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot start the device process: "
                         "%s", strerror(errno));
    }
    setpgid(pid, pid);   /* as the child does: whichever runs first */
    s->pid = pid;
    s->req_fd = req[0];
    s->rec_fd = rec[0];
    return 0;
}

/* Ends the worker and what it left in its group.  wait: reap it now and return its status;
 * otherwise the device reaps it later, while the caller goes on. */
static int stop(nopi_server *s, bool wait)
{
    int status = 0;
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        if (wait) {
            while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
                ;
            kill(-s->pid, SIGKILL);   /* anything it left behind in its group */
        } else {
            nopi_device_reap(s->dev, s->pid);
        }
    }
    if (s->req_fd >= 0)
        close(s->req_fd);
    if (s->rec_fd >= 0)
        close(s->rec_fd);
    s->pid = 0;
    s->req_fd = s->rec_fd = -1;
    return status;
}

/* Sends a request; -1 when the worker is gone. */
static int send_request(nopi_server *s, const void *req, size_t len)
{
    uint64_t n = len;
    struct iovec iov[2] = { { &n, sizeof n }, { (void *)req, len } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
    size_t left = sizeof n + len;
    while (left) {
        ssize_t k = sendmsg(s->req_fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
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

int nopi_server_call(nopi_server *s, const char *opname, double budget, int runs,
                     const void *req, size_t len, nopi_take_fn *take, void *take_ctx,
                     nop_error *err)
{
    if (len > MAX_REQUEST)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a request of %zu bytes to the "
                         "device process is too large", len);
    /* the phase page as it was before this request: what changes is the request's */
    uint32_t seq = atomic_load(&s->phase->seq);
    /* a worker that went away between requests is replaced, once */
    for (int tries = 0; s->pid == 0 || send_request(s, req, len) != 0; tries++) {
        if (s->pid)
            stop(s, true);
        if (tries == 2 || start(s, err) != 0)
            return tries == 2 ? nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "the device "
                                          "process ended before it took any work") : -1;
    }
    nop_device_opts o = nopi_device_opts(s->dev);
    int phases = runs > 0 && runs < INT_MAX / 3 ? 3 * runs : -1;
    double now = nopi_now();
    nopi_watch wt = { s->dev, s->phase, seq, phases, budget, o.timeout, now + budget,
                      phases < 0 ? now + budget : 0, "", false, false, { 0 }, take, take_ctx };
    snprintf(wt.where, sizeof wt.where, "%s", opname);
    bool in_time = nopi_watch_read(&wt, s->rec_fd);
    if (in_time && !wt.malformed && wt.done) {
        if (wt.result.retire || wt.result.rc != 0)
            stop(s, false);
        if (wt.result.rc != 0 && err)
            *err = wt.result.err;
        return wt.result.rc == 0 ? 0 : -1;
    }
    int status = stop(s, true);
    if (!in_time) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "timeout: it did not finish within its "
                  "time limit and was stopped");
        nopi_detail(err, "look for a loop that never ends, or give it more time with "
                    "--timeout SECONDS");
    } else if (wt.malformed) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "the device process sent a malformed "
                  "report: kernel code overwrote the runtime's memory?");
        nopi_detail(err, "run with --memcheck to find a bad write at its source line");
    } else if (WIFSIGNALED(status)) {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "the device process died: %s (signal %d)",
                  signal_name(WTERMSIG(status)), WTERMSIG(status));
        nopi_detail(err, "%s", signal_hint(WTERMSIG(status)));
    } else {
        nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "user code ended the device process "
                  "(exit status %d) before the op finished", WEXITSTATUS(status));
        nopi_detail(err, "kernels, shape functions and references must return, not exit");
    }
    if (err && !err->diag.where[0])
        snprintf(err->diag.where, sizeof err->diag.where, "%s", wt.where);
    return -1;
}

void nopi_server_free(nopi_server *s)
{
    if (!s)
        return;
    stop(s, false);
    munmap(s->phase, sizeof *s->phase);
    free(s);
}

/* ---- one request, one worker ------------------------------------------------------------ */

typedef struct once {
    nopi_work_fn *work;
    void *ctx;
} once;

static int serve_once(nop_device *cdev, void *ctx, const void *req, size_t len, nopi_wire *w,
                      nop_error *err)
{
    const once *o = ctx;
    nopi_wire_retire(w);   /* nothing follows */
    return o->work(cdev, o->ctx, w, err);
}

int nopi_sandbox_call(nop_device *dev, const char *opname, double budget, int runs,
                      nopi_work_fn *work, void *work_ctx, nopi_take_fn *take, void *take_ctx,
                      nop_error *err)
{
    once o = { work, work_ctx };
    nopi_server *s;
    if (nopi_server_new(&s, dev, serve_once, &o, err) != 0)
        return -1;
    int rc = nopi_server_call(s, opname, budget, runs, NULL, 0, take, take_ctx, err);
    nopi_server_free(s);
    return rc;
}
