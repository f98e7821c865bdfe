/*
 * worker.c - the worker's side of the boundary: what runs in the processes user code runs in.
 *
 * A one-shot worker (nopi_sandbox_call) settles its descriptors, makes its in-process device,
 * confines itself (what it may read: Landlock; what it may call: seccomp.c) and serves its
 * request; a zygote (a server's) runs no user code
 * and hands each request to a child, made ready (device made, confined, library loaded)
 * before its request comes, or put back after its last one (snapshot.c), then reports to the
 * parent, on the socket the child has closed, which child took it (with its record pipe and
 * phase page) and how each ended.  Every process here is its own process group (the worker)
 * or in it, dies with its parent (PR_SET_PDEATHSIG, which the filter then forbids changing),
 * and writes only records (wire.c).  Nothing here reads what the parent keeps: it calls no
 * function of sandbox.c, the parent's side.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/usercode.h"
#include "device/fiber.h"
#include "server.h"
#include "snapshot.h"

/* Keeps the two descriptors a process of the worker's holds, as 3 and 4 (usercode.h). */
static int keep_fds(int *a, int *b)
{
    int fds[2] = { *a, *b };
    if (nopi_usercode_keep_fds(fds, 2) != 0)
        return -1;
    *a = fds[0];
    *b = fds[1];
    return 0;
}

/* Gives the worker its two channels as descriptors 3 (requests) and 4 (records), closes all
 * the others it inherited and points 0, 1 and 2 at /dev/null.  Under AddressSanitizer, 2
 * stays: the sanitizer reports there. */
static int settle_fds(int *req, int *rec)
{
    if (keep_fds(req, rec) != 0)
        return -1;
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

/* Gives every signal the default disposition (but those the caller ignores) and an empty
 * mask, then the runtime's fault handlers: the caller's handlers are its own, not the
 * device's.  A host program's SIGSEGV handler (a test framework's, say) would otherwise run in
 * a worker whose kernel wrecked the heap, and hang there on malloc's lock instead of letting
 * the worker die of the fault. */
static void own_signals(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
            sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)
            signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    nopi_fiber_own_process();
}

/* Makes the serving process's device (a zygote's child: takes the one it inherited) and
 * confines it, starting its threads unless threads is false (a kept child: its device's
 * runs on this thread time their cores with a timer of its own instead, pool.h); 0, or -1
 * with done filled. */
static int set_up(nopi_server *s, nopi_wire *w, nop_device **cdev, struct nopi_done *done,
                  bool threads)
{
    if (s->proto)
        nopi_device_attach(*cdev = s->proto, w);
    else if (!(*cdev = nopi_device_for_worker(s->dev, w)))
        return done->rc = nopi_nomem(&done->err);
    if (nopi_usercode_confine(s->library, s->folder) != 0)
        return done->rc = nopi_fault(&done->err, NOP_FAULT_HOST, "cannot confine the device "
                                     "process's file access: %s", strerror(errno));
    int timer = threads ? -1 : nopi_device_own_timer(*cdev);   /* before the filter */
    if (nopi_confine(w->fd, timer, &done->err) != 0)
        return done->rc = -1;
    /* its runs use the device's threads: made before the request comes, and after the
     * filter, which a thread made before it would not have */
    if (threads && s->proto && s->warm_cores)
        nopi_device_start(*cdev);
    return 0;
}

/* Serves one request (len bytes at req) and sends DONE; returns whether to retire. */
static bool serve_one(nopi_server *s, nop_device *cdev, nopi_wire *w, struct nopi_done *done,
                  const char *req, uint64_t len)
{
    /* the printf text the parent shows if this request's worker dies is this request's:
     * none yet, whatever an earlier request on this page wrote */
    nopi_wire_printf(w, NULL, 0);
    if (done->rc == 0)   /* else: the set-up failed, and this answer says why */
        done->rc = s->serve(cdev, s->ctx, req, (size_t)len, w, &done->err);
    done->retire = done->rc != 0 || w->retire;
    nopi_wire_put(w, NOPI_REC_DONE, done, sizeof *done);
    return done->retire;
}

/* Waits for a request on fd without reading it (or the descriptors that come with it); false
 * when none will come. */
static bool request_waits(int fd)
{
    char b;
    struct iovec iov = { &b, 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    ssize_t n;
    while ((n = recvmsg(fd, &m, MSG_PEEK)) < 0 && errno == EINTR)
        ;
    return n == 1;
}

/* A kept child's snapshot, taken once its request has come (a spare may never get one) and
 * before it reads it, with the device's threads made a resident pool: started by each
 * request and ended after it, so that the child has no thread but its own between requests.
 * Returns what nopi_snap_take does: 0 once taken, 1 each time a restore comes back here; or
 * -1 (serve once and end). */
static int snapshot(nopi_snap *snap, nop_device *cdev, int own_fd)
{
    if (!request_waits(own_fd) || nopi_device_start_resident(cdev) != 0)
        return -1;
    return nopi_snap_take(snap);
}

/* Reads a child's next request into *req (*len bytes): the descriptors that came with it are
 * its inputs' memfd (w->in_fd) and, for a child put back (again), before it, a record pipe of
 * the request's own, which w and the trap handler write to from now.  false when none came. */
static bool next_request(int own_fd, bool again, nopi_wire *w, char **req, uint64_t *len)
{
    int got[2];
    if (!nopi_read_request_alone(own_fd, req, len, got, 2))
        return false;
    if (!again) {
        w->in_fd = got[0];
        if (got[1] >= 0)
            close(got[1]);
        return true;
    }
    if (got[0] < 0)
        return false;
    w->fd = got[0];
    w->in_fd = got[1];
    nopi_confine_report_to(w->fd);
    return true;
}

/* A zygote's child: made ready (its device made, confined, its library loaded) before its
 * request comes, on a socket of its own from the zygote; serves that one request, sending
 * its records on a pipe of its own and its phases on a page of its own, then ends.  A child
 * of a server that reuses its children instead puts itself back, after each request it
 * answered, as it was before its first (snapshot.h), says so with one byte on its socket
 * (whose other end the parent holds from then: the child's lane), and serves the next
 * request that comes on it; it ends when it cannot be put back, or when the request failed
 * (the runtime may be broken). */
static _Noreturn void child(nopi_server *s, pid_t zygote, int own_fd, int rec_fd,
                            struct nopi_phase_page *page)
{
    if (!nopi_usercode_die_with(zygote))
        _exit(0);
    /* its own two channels only: not the zygote's socket to the parent (the zygote's words
     * cannot be forged), nor a sibling's pidfd or page */
    if (keep_fds(&own_fd, &rec_fd) != 0)
        _exit(0);
    signal(SIGPIPE, SIG_DFL);   /* as the caller had it, not as the zygote has */
    nopi_snap *snap = s->reuse ? nopi_snap_open() : NULL;   /* before the filter */
    nopi_wire w = { rec_fd, PTHREAD_MUTEX_INITIALIZER, false, page, -1, snap != NULL };
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    nop_device *cdev = NULL;
    /* a child to be put back starts its threads as it takes its snapshot */
    if (set_up(s, &w, &cdev, &done, !snap) == 0 && s->prepare) {
        done.rc = s->prepare(s->ctx, &w, &done.err);   /* a failure answers the request */
        /* the phase it announced has ended: a request that comes long after must not find
         * its deadline passed */
        nopi_wire_phase(&w, NOPI_PHASE_OTHER, 0, "");
    }
    int took = snap && done.rc == 0 ? snapshot(snap, cdev, own_fd) : -1;
    if (took == 1) {   /* back, as it was: the last request's phases are over; ready */
        nopi_wire_phase(&w, NOPI_PHASE_OTHER, 0, "");
        if (nopi_fd_all(own_fd, &(char){ 1 }, 1, true) != 0)
            _exit(0);
    }
    char *req = NULL;
    uint64_t len;
    if (!next_request(own_fd, took == 1, &w, &req, &len))
        _exit(0);
    if (took < 0)   /* served once: the zygote need not wait for it to say it is back */
        close(own_fd);
    if (serve_one(s, cdev, &w, &done, req, len) || took < 0)
        _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
    nopi_device_end_threads(cdev);   /* a snapshot is put back with no thread but this one */
    nopi_snap_restore(snap);         /* returns only when it cannot */
    _exit(0);
}

/* A spare child, forked ahead of its request: its pid, the socket its request goes on, the
 * read end of its own record pipe and its own phase page (a memfd), which go to the parent
 * with the request's start. */
typedef struct spare_child {
    pid_t pid;
    int req, rec, phase;
} spare_child;

static void close_spare(spare_child *c)
{
    int fds[3] = { c->req, c->rec, c->phase };
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    *c = (spare_child){ -1, -1, -1, -1 };
}

/* Forks the next child, which makes itself ready and waits for its request; false when it
 * cannot (no child: the next request is answered ZMSG_NOFORK). */
static bool spare(nopi_server *s, pid_t self, spare_child *c)
{
    int p[2] = { -1, -1 }, r[2] = { -1, -1 };
    *c = (spare_child){ -1, -1, -1, -1 };
    struct nopi_phase_page *page = MAP_FAILED;
    /* a socket, not a pipe, for requests: one may come with a descriptor */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0 ||
        pipe2(r, O_CLOEXEC) != 0 ||
        (c->phase = memfd_create("neuronop-phase", MFD_CLOEXEC)) < 0 ||
        ftruncate(c->phase, sizeof *page) != 0 ||
        (page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED, c->phase, 0))
            == MAP_FAILED) {
        int fds[4] = { p[0], p[1], r[0], r[1] };
        for (int i = 0; i < 4; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        close_spare(c);
        return false;
    }
    fcntl(r[1], F_SETPIPE_SZ, PIPE_BYTES);   /* best effort: smaller is only slower */
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        close(r[0]);
        child(s, self, p[0], r[1], page);
    }
    munmap(page, sizeof *page);
    close(p[0]);
    close(r[1]);
    c->pid = pid;
    c->req = p[1];
    c->rec = r[0];
    if (pid < 0) {
        close_spare(c);
        return false;
    }
    return true;
}

/* Tells the parent what became of its children (struct nopi_zmsg, with the npass descriptors
 * at pass); false when the parent is gone. */
static bool tell(int fd, int32_t kind, uint32_t seq, int32_t status, const int *pass,
                 int npass)
{
    struct nopi_zmsg m = { kind, status, seq };
    return nopi_send_request(fd, &m, sizeof m, pass, npass) == 0;
}

/* Reaps child pid of request seq (killing it first unless it has ended) and tells the parent
 * its wait status. */
static bool reap(int fd, pid_t pid, uint32_t seq, bool kill_it)
{
    int status = 0;
    if (kill_it)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return tell(fd, ZMSG_ENDED, seq, status, NULL, 0);
}

/* The zygote: hands each request to the spare child, which has made itself ready meanwhile,
 * and tells the parent at once (ZMSG_STARTED, with the request's number, the read end of
 * that child's own record pipe and its own phase page); then forks the next spare, which
 * readies itself while this request runs.  A server that reuses its children gives the
 * parent the child's request socket too (its lane): the child puts itself back after each
 * request and says so with one byte on it, and the parent sends it its next request itself,
 * with a record pipe of that request's own; a request that comes here instead is one the
 * parent no longer trusts that child with.  Such a server forks a spare only when it needs
 * one, on the next request's path (most children serve to the end).  When a child ends the
 * zygote reaps it and tells the parent its wait status (ZMSG_ENDED, with the number of the
 * request it came with).  A child still there when the next request comes here has answered
 * (the parent sends the next request only after DONE) or been given up: it is killed before
 * the next child is handed its request, and reaped after, off that request's path.  An empty
 * request is the parent's word that it gave up the last one (nopi_server_forget): its child
 * is killed then, rather than left to run until the next request comes.  A killed
 * child never runs user code again, and it never had the next child's pipe or page: nothing
 * a child leaves reaches the next, which comes from this process's state.  The zygote runs
 * no user code: the library is loaded in each child. */
static _Noreturn void zygote(nopi_server *s, int req_fd)
{
    signal(SIGCHLD, SIG_DFL);   /* the caller may ignore it, which would lose the status */
    signal(SIGPIPE, SIG_IGN);   /* a child that died before its request: a failed write */
    char *req = NULL;
    uint64_t len;
    pid_t self = getpid();
    uint32_t seq = 0, cur_seq = 0;
    /* the child of the last request (only its pid: its channels went to the parent) and a
     * pidfd of it (readable once it has ended) */
    pid_t cur = -1;
    int cur_fd = -1;
    /* the device each child inherits, its stacks painted here once rather than in every
     * child (which would fault in every page of them); a child makes its own without it */
    if ((s->proto = nopi_device_for_worker(s->dev, NULL)) &&
        nopi_device_warm(s->proto, s->warm_stack, s->warm_cores) != 0) {
        nop_device_free(s->proto);
        s->proto = NULL;
    }
    spare_child next;
    spare(s, self, &next);
    for (;;) {
        struct pollfd p[2] = { { req_fd, POLLIN, 0 }, { cur_fd, POLLIN, 0 } };
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (cur > 0 && p[1].revents) {   /* it has ended */
            close(cur_fd);
            cur_fd = -1;
            if (!reap(req_fd, cur, cur_seq, false))
                break;
            cur = -1;
        }
        if (!p[0].revents)
            continue;
        int in_fd;
        if (!nopi_read_request(req_fd, &req, &len, &in_fd, 1))
            break;   /* the parent is done with the device: its children end with it */
        if (len == 0) {   /* the parent gave up the last request: its child ends now */
            if (in_fd >= 0)
                close(in_fd);
            if (cur > 0)
                kill(cur, SIGKILL);   /* reaped, and told ENDED, when its pidfd says so */
            continue;
        }
        uint32_t this_seq = ++seq;
        pid_t old = cur;
        int old_fd = cur_fd;
        uint32_t old_seq = cur_seq;
        if (old > 0)
            kill(old, SIGKILL);   /* before the next child has its request */
        cur = -1;
        cur_fd = -1;
        if (next.pid <= 0)   /* a reused child is gone: its replacement is made now */
            spare(s, self, &next);
        bool sent = next.pid > 0 &&
                    nopi_send_request(next.req, req, (size_t)len, &in_fd, in_fd >= 0) == 0;
        if (in_fd >= 0)
            close(in_fd);   /* the child has its own */
        if (!sent && next.pid > 0)   /* it died waiting: this request gets no child */
            reap(req_fd, next.pid, this_seq, true);
        int fds[3] = { next.rec, next.phase, next.req };
        bool told = tell(req_fd, sent ? ZMSG_STARTED : ZMSG_NOFORK, this_seq,
                         sent ? next.pid : 0, fds, !sent ? 0 : s->reuse ? 3 : 2);
        if (sent) {
            cur = next.pid;
            cur_seq = this_seq;
            cur_fd = (int)syscall(SYS_pidfd_open, cur, 0);
        }
        close_spare(&next);   /* the parent has what it needs of the child's channels */
        if (!told)
            break;
        /* the next child readies itself while this request runs; a reusing server makes one
         * only when this one is gone (most never are) */
        if (!s->reuse)
            spare(s, self, &next);
        if (old > 0) {
            if (!reap(req_fd, old, old_seq, false))
                break;
            if (old_fd >= 0)
                close(old_fd);
        }
        if (cur > 0 && cur_fd < 0) {   /* no pidfd: wait for its end */
            if (!reap(req_fd, cur, cur_seq, false))
                break;
            cur = -1;
        }
    }
    /* reaped here, not left to whoever inherits them: when nop_device_free has reaped the
     * zygote, no process of the device is left, not even a zombie */
    pid_t left[2] = { cur, next.pid };
    for (int i = 0; i < 2; i++)
        if (left[i] > 0) {
            kill(left[i], SIGKILL);
            while (waitpid(left[i], NULL, 0) < 0 && errno == EINTR)
                ;
        }
    _exit(0);
}

/* The worker (or zygote): serves requests until its parent closes the socket. */
_Noreturn void nopi_worker_main(nopi_server *s, pid_t parent, int req_fd, int rec_fd)
{
    setpgid(0, 0);
    if (!nopi_usercode_die_with(parent))
        _exit(0);
    nopi_usercode_drop_powers();   /* the zygote's children inherit it */
    own_signals();
    nopi_wire w = { rec_fd, PTHREAD_MUTEX_INITIALIZER, false, s->phase, -1, false };
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    nop_device *cdev = NULL;
    if (settle_fds(&req_fd, &w.fd) != 0)
        done.rc = nopi_fault(&done.err, NOP_FAULT_HOST, "cannot set up the device process's "
                             "descriptors: %s", strerror(errno));
    else if (s->zygote)
        zygote(s, req_fd);
    else
        set_up(s, &w, &cdev, &done, true);
    char *req = NULL;
    uint64_t len;
    while (nopi_read_request(req_fd, &req, &len, &w.in_fd, 1)) {
        if (serve_one(s, cdev, &w, &done, req, len))
            break;
        memset(&done, 0, sizeof done);
    }
    _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
}

