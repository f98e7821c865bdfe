/*
 * sandbox.c - the worker processes user code (kernels, shape functions, references) runs in,
 * and the parent's verdict on what they did.
 *
 * Two kinds.  A one-shot worker (nopi_sandbox_call: `neuronop run`, `bench`) is forked for
 * one request, inherits the caller's memory copy-on-write (the library, the inputs) without a
 * copy, serves the request and ends.  A server (nopi_server_*: `neuronop test`) forks a
 * zygote once: a process that runs no user code at all and, for each request, forks a fresh
 * child which loads the library, confines itself, serves that one request and ends; the
 * zygote reports the child's wait status to the parent over the request socket, which the
 * child has closed, so no user code can forge it.  Every request thus starts from the same
 * pristine state: no alarm, timer, signal disposition, limit, library global or TCM a case
 * leaves reaches the next.
 *
 * Every process here becomes (or stays in) its own process group, dies with its parent
 * (PR_SET_PDEATHSIG, which the worker's seccomp filter then forbids changing), closes every
 * descriptor but its channels, and points its standard input, output and error at /dev/null
 * (a kernel cannot write to the terminal or into neuronop's own output).  The child sends
 * records over its pipe (wire.c): diagnostics as they happen, the results and a last DONE;
 * the phase it is in goes on a page it shares with the parent.  The parent reads them
 * (watch.c) and trusts none of it: its deadlines come from its own clock and the request
 * alone, and a worker that dies, exits before DONE, sends garbage or misses a deadline fails
 * that request as a device error naming the op and where it was.
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
    bool zygote;                   /* a fresh child per request (else one-shot, inline) */
    struct nopi_phase_page *phase;   /* MAP_SHARED: the worker's current phase */
    pid_t pid;                     /* the worker (or zygote), 0 when none is running */
    int req_fd, rec_fd;            /* the parent's ends: requests out (and, from a zygote,
                                    * its children's wait statuses in), records in */
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

/* Dies with parent: SIGKILL when it ends, however it ends.  false when it has already. */
static bool die_with(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    return getppid() == parent;   /* else the parent died before the line above */
}

/* Sends a request (its length, then its bytes, with descriptor pass attached unless it is
 * -1) on socket fd; -1 when the other end is gone. */
static int send_request(int fd, const void *req, size_t len, int pass)
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
static bool read_request(int fd, char **req, uint64_t *len, int *got)
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

/* Makes the serving process's device and confines it; 0, or -1 with done filled. */
static int set_up(nopi_server *s, nopi_wire *w, nop_device **cdev, struct nopi_done *done)
{
    if (!(*cdev = nopi_device_for_worker(s->dev, w)))
        return done->rc = nopi_nomem(&done->err);
    if (nopi_confine(w->fd, &done->err) != 0)
        return done->rc = -1;
    return 0;
}

/* Serves one request (len bytes at req) and sends DONE; returns whether to retire. */
static bool serve_one(nopi_server *s, nop_device *cdev, nopi_wire *w, struct nopi_done *done,
                  const char *req, uint64_t len)
{
    if (done->rc == 0)   /* else: the set-up failed, and this answer says why */
        done->rc = s->serve(cdev, s->ctx, req, (size_t)len, w, &done->err);
    done->retire = done->rc != 0 || w->retire;
    nopi_wire_put(w, NOPI_REC_DONE, done, sizeof *done);
    return done->retire;
}

/* A zygote's child: made ready (its device made, confined) before its request comes, on a
 * pipe of its own from the zygote; serves that one request, then ends. */
static _Noreturn void child(nopi_server *s, pid_t zygote, int req_fd, int rec_fd, int own_fd)
{
    if (!die_with(zygote))
        _exit(0);
    close(req_fd);   /* only the zygote reports on the socket: its words cannot be forged */
    signal(SIGPIPE, SIG_DFL);   /* as the caller had it, not as the zygote has */
    nopi_wire w = { rec_fd, PTHREAD_MUTEX_INITIALIZER, false, s->phase, -1 };
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    nop_device *cdev = NULL;
    set_up(s, &w, &cdev, &done);
    char *req = NULL;
    uint64_t len;
    if (read_request(own_fd, &req, &len, &w.in_fd))
        serve_one(s, cdev, &w, &done, req, len);
    _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
}

/* Forks the next child, which waits for its request; returns its pid (*fd: the pipe to send
 * the request on), or -1. */
static pid_t spare(nopi_server *s, pid_t self, int req_fd, int rec_fd, int *fd)
{
    int p[2];   /* a socket, not a pipe: a request may come with a descriptor */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        child(s, self, req_fd, rec_fd, p[0]);
    }
    close(p[0]);
    if (pid < 0)
        close(p[1]);
    *fd = pid < 0 ? -1 : p[1];
    return pid;
}

/* The zygote: hands each request to a fresh child, waits for it and sends the parent its wait
 * status (an int32; ZYGOTE_NOFORK when there was no child).  The next child is forked (and
 * makes itself ready) while the current one serves, which takes the fork off the request's
 * path.  The zygote runs no user code: the library is loaded in each child, so every request
 * starts from this process's state. */
#define ZYGOTE_NOFORK INT32_MIN
static _Noreturn void zygote(nopi_server *s, int req_fd, int rec_fd)
{
    signal(SIGCHLD, SIG_DFL);   /* the caller may ignore it, which would lose the status */
    signal(SIGPIPE, SIG_IGN);   /* a child that died before its request: a failed write */
    char *req = NULL;
    uint64_t len;
    pid_t self = getpid();
    int fd, in_fd;
    pid_t next = spare(s, self, req_fd, rec_fd, &fd);
    while (read_request(req_fd, &req, &len, &in_fd)) {
        pid_t pid = next;
        if (pid > 0 && send_request(fd, req, (size_t)len, in_fd) != 0)
            pid = -1;   /* it died waiting: reaped below, and this request gets none */
        if (fd >= 0)
            close(fd);
        if (in_fd >= 0)
            close(in_fd);   /* the child has its own */
        if (pid < 0 && next > 0)
            while (waitpid(next, NULL, 0) < 0 && errno == EINTR)
                ;
        next = spare(s, self, req_fd, rec_fd, &fd);
        int status = 0;
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        int32_t st = pid > 0 ? status : ZYGOTE_NOFORK;
        if (send(req_fd, &st, sizeof st, MSG_NOSIGNAL) != (ssize_t)sizeof st)
            break;
    }
    _exit(0);
}

/* The worker (or zygote): serves requests until its parent closes the socket. */
static _Noreturn void worker(nopi_server *s, pid_t parent, int req_fd, int rec_fd)
{
    setpgid(0, 0);
    if (!die_with(parent))
        _exit(0);
    nopi_wire w = { rec_fd, PTHREAD_MUTEX_INITIALIZER, false, s->phase, -1 };
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    nop_device *cdev = NULL;
    if (settle_fds(&req_fd, &w.fd) != 0)
        done.rc = nopi_fail(&done.err, NOP_ERR_DEVICE, NULL, 0, 0, "cannot set up the "
                            "device process's descriptors: %s", strerror(errno));
    else if (s->zygote)
        zygote(s, req_fd, w.fd);
    else
        set_up(s, &w, &cdev, &done);
    char *req = NULL;
    uint64_t len;
    while (read_request(req_fd, &req, &len, &w.in_fd)) {
        if (serve_one(s, cdev, &w, &done, req, len))
            break;
        memset(&done, 0, sizeof done);
    }
    _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
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
    for (int tries = 0; s->pid == 0 || send_request(s->req_fd, req, len, pass) != 0; tries++) {
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
