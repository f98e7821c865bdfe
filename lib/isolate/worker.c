/*
 * worker.c - the worker's side of the boundary: what runs in the processes user code runs in.
 *
 * A one-shot worker (nopi_sandbox_call) settles its descriptors, makes its in-process device,
 * confines itself (seccomp.c) and serves its request; a zygote (a server's) runs no user code
 * and hands each request to a fresh child, made ready (device made, confined) before its
 * request comes, then reports the child's wait status to the parent on the socket the child
 * has closed.  Every process here is its own process group (the worker) or in it, dies with
 * its parent (PR_SET_PDEATHSIG, which the filter then forbids changing), and writes only
 * records (wire.c).  Nothing here reads what the parent keeps: it calls no function of
 * sandbox.c, the parent's side.
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

#include "server.h"

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
    if (nopi_read_request(own_fd, &req, &len, &w.in_fd))
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
 * makes itself ready) once that status is sent, while the parent reads the results and
 * sends its next request, which takes the fork off the request's path.  The zygote runs no user code: the library is loaded in each child, so every request
 * starts from this process's state. */
static _Noreturn void zygote(nopi_server *s, int req_fd, int rec_fd)
{
    signal(SIGCHLD, SIG_DFL);   /* the caller may ignore it, which would lose the status */
    signal(SIGPIPE, SIG_IGN);   /* a child that died before its request: a failed write */
    char *req = NULL;
    uint64_t len;
    pid_t self = getpid();
    int fd, in_fd;
    pid_t next = spare(s, self, req_fd, rec_fd, &fd);
    while (nopi_read_request(req_fd, &req, &len, &in_fd)) {
        pid_t pid = next;
        if (pid > 0 && nopi_send_request(fd, req, (size_t)len, in_fd) != 0)
            pid = -1;   /* it died waiting: reaped below, and this request gets none */
        if (fd >= 0)
            close(fd);
        if (in_fd >= 0)
            close(in_fd);   /* the child has its own */
        if (pid < 0 && next > 0)
            while (waitpid(next, NULL, 0) < 0 && errno == EINTR)
                ;
        int status = 0;
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        int32_t st = pid > 0 ? status : ZYGOTE_NOFORK;
        if (send(req_fd, &st, sizeof st, MSG_NOSIGNAL) != (ssize_t)sizeof st)
            break;
        next = spare(s, self, req_fd, rec_fd, &fd);   /* while the parent reads the results */
    }
    _exit(0);
}

/* The worker (or zygote): serves requests until its parent closes the socket. */
_Noreturn void nopi_worker_main(nopi_server *s, pid_t parent, int req_fd, int rec_fd)
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
    while (nopi_read_request(req_fd, &req, &len, &w.in_fd)) {
        if (serve_one(s, cdev, &w, &done, req, len))
            break;
        memset(&done, 0, sizeof done);
    }
    _exit(0);   /* no atexit handlers, no stdio flush: the parent owns those */
}

