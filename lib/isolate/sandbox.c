/*
 * sandbox.c - the parent's side of the boundary (the monitor): starting and stopping the
 * worker processes user code runs in, sending them requests, and the verdict on what came of
 * each.
 *
 * Two kinds of worker (worker.c runs inside them).  A one-shot worker (nopi_sandbox_call:
 * `neuronop run`, `bench`) is forked for one request and inherits the caller's memory
 * copy-on-write (the library, the inputs) without a copy.  A server (nopi_server_*: `neuronop
 * test`, and devices made with keep_worker) forks a zygote once, which runs no user code and
 * hands each request to a fresh child; the zygote reports the child's wait status over the
 * request socket, which the child has closed, so no user code can forge it.  Every request to
 * a server thus starts from the same pristine state: no alarm, timer, signal disposition,
 * limit, library global or TCM a case leaves reaches the next.
 *
 * The parent reads the records a worker sends (watch.c) and trusts none of it: its deadlines
 * come from its own clock and the request alone, and a worker that dies, exits before DONE,
 * sends garbage or misses a deadline fails that request as a device error naming the op and
 * where it was; its process group is killed.  Nothing here runs in a worker but the fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"

#define PIPE_BYTES (1 << 20)       /* a run's output fits the pipe: no round trips */

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
        return "user code made a system call the device does not have while it kept SIGSYS "
               "from the report (blocked it)";
    default:
        return "user code raised the signal itself, or broke the runtime so that it did; run "
               "with --memcheck to find a bad write at its line";
    }
}

static int server_new(nopi_server **out, nop_device *dev, nopi_serve_fn *serve, void *ctx,
                      bool zygote, nop_error *err)
{
    nopi_server *s = calloc(1, sizeof *s);
    if (!(*out = s))
        return nopi_nomem(err);
    *s = (nopi_server){ dev, serve, ctx, zygote, NULL, 0, -1, -1 };
    s->phase = mmap(NULL, sizeof *s->phase, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
    if (s->phase == MAP_FAILED) {
        free(s);
        *out = NULL;
        return nopi_nomem(err);
    }
    return 0;
}

int nopi_server_new(nopi_server **out, nop_device *dev, nopi_serve_fn *serve, void *ctx,
                    nop_error *err)
{
    return server_new(out, dev, serve, ctx, true, err);
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
        nopi_worker_main(s, parent, req[1], rec[1]);
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
    if (s->zygote)   /* the records left in the pipe are read after the child's end */
        fcntl(rec[0], F_SETFL, O_NONBLOCK);
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

int nopi_server_call(nopi_server *s, const char *opname, double budget, int runs,
                     const void *req, size_t len, nopi_take_fn *take, void *take_ctx,
                     nop_error *err)
{
    return nopi_server_call_fd(s, opname, budget, runs, req, len, -1, take, take_ctx, err);
}

int nopi_server_call_fd(nopi_server *s, const char *opname, double budget, int runs,
                        const void *req, size_t len, int pass, nopi_take_fn *take,
                        void *take_ctx, nop_error *err)
{
    if (len > MAX_REQUEST)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a request of %zu bytes to the "
                         "device process is too large", len);
    /* the phase page as it was before this request: what changes is the request's */
    uint32_t seq = atomic_load(&s->phase->seq);
    /* a worker that went away between requests is replaced, once */
    for (int tries = 0; s->pid == 0 || nopi_send_request(s->req_fd, req, len, pass) != 0; tries++) {
        if (s->pid)
            stop(s, true);
        if (tries == 2 || start(s, err) != 0)
            return tries == 2 ? nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "the device "
                                          "process ended before it took any work") : -1;
    }
    nop_device_opts o = nopi_device_opts(s->dev);
    int most = nopi_device_max_cores(s->dev);
    nopi_watch wt = { .dev = s->dev, .phase = s->phase, .seq = seq, .op = opname,
                      .budget = budget, .timeout = o.timeout, .runs = runs > 0 ? runs : 0,
                      .ncores = most, .status_fd = s->zygote ? s->req_fd : -1, .take = take,
                      .ctx = take_ctx };
    bool in_time = nopi_watch_read(&wt, s->rec_fd);
    bool clean = s->zygote ? wt.ended && WIFEXITED(wt.status) && WEXITSTATUS(wt.status) == 0
                           : true;
    if (in_time && !wt.malformed && wt.done && clean) {
        if (!s->zygote && (wt.result.retire || wt.result.rc != 0))
            stop(s, false);
        if (wt.result.rc != 0 && err)
            *err = wt.result.err;
        return wt.result.rc == 0 ? 0 : -1;
    }
    int status;
    if (s->zygote && in_time && !wt.malformed && wt.ended && wt.status != ZYGOTE_NOFORK)
        status = wt.status;   /* its child ended badly; the zygote goes on */
    else
        status = stop(s, true);
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
    if (server_new(&s, dev, serve_once, &o, false, err) != 0)
        return -1;
    int rc = nopi_server_call(s, opname, budget, runs, NULL, 0, take, take_ctx, err);
    nopi_server_free(s);
    return rc;
}
