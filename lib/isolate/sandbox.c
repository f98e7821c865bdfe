/*
 * sandbox.c - the parent's side of the boundary (the monitor): starting and stopping the
 * worker processes user code runs in, sending them requests, and the verdict on what came of
 * each.
 *
 * Two kinds of worker (worker.c runs inside them).  A one-shot worker (nopi_sandbox_call:
 * `neuronop run`, `bench`) is forked for one request and inherits the caller's memory
 * copy-on-write (the library, the inputs) without a copy.  A server (nopi_server_*: `neuronop
 * test`, and devices made with keep_worker) forks a zygote once, which runs no user code and
 * hands each request to a child (a fresh one, or for a server that reuses its children one
 * put back to its state before its first request: snapshot.h), whose records come on a pipe
 * of the request's own and whose phases on a page of its own; the zygote reports on the
 * request socket, which the child has closed (so no user code can forge it), which child
 * took the request and how each ended.  Every request to a server thus starts from the same
 * pristine state: no alarm, timer, signal disposition, limit, library global or TCM a case
 * leaves reaches the next.
 *
 * The parent reads the records a worker sends (watch.c) and trusts none of it: its deadlines
 * come from its own clock and the request alone, and a worker that dies, exits before DONE,
 * sends garbage or misses a deadline fails that request as a device error naming the op and
 * where it was; its process group is killed.  Nothing here runs in a worker but the fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"

#define LANE_WAIT_US 500000   /* how long a reused child has to say it is back */
#define FORGET_WAIT 1.0       /* seconds a zygote has to say a child took a posted request */

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
    *s = (nopi_server){ .dev = dev, .serve = serve, .ctx = ctx, .zygote = zygote,
                        .max_record = nopi_watch_record_bound(), .held = 1,
                        .req_fd = -1, .rec_fd = -1,
                        .lane_fd = -1, .lane_stat = -1 };
    s->phase = mmap(NULL, sizeof *s->phase, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
    if (s->phase == MAP_FAILED) {
        free(s);
        *out = NULL;
        return nopi_nomem(err);
    }
    /* a zygote's children have pages of their own: no process forked later (this server's
     * workers, or another library's) has any business with this one */
    if (zygote)
        madvise(s->phase, sizeof *s->phase, MADV_DONTFORK);
    return 0;
}

int nopi_server_new(nopi_server **out, nop_device *dev, nopi_serve_fn *serve, void *ctx,
                    nop_error *err)
{
    return server_new(out, dev, serve, ctx, true, err);
}

void nopi_server_prepare(nopi_server *s, nopi_prepare_fn *prepare)
{
    s->prepare = prepare;
}

int nopi_server_library(nopi_server *s, const char *path, nop_error *err)
{
    free(s->library);
    if (!(s->library = path ? strdup(path) : NULL) && path)
        return nopi_nomem(err);
    return 0;
}

int nopi_server_folder(nopi_server *s, const char *folder, nop_error *err)
{
    free(s->folder);
    if (!(s->folder = folder ? strdup(folder) : NULL) && folder)
        return nopi_nomem(err);
    return 0;
}

int nopi_malformed(nop_error *err, const char *where)
{
    nopi_fault(err, NOP_FAULT_WORKER, "the device process sent a malformed report: kernel "
               "code overwrote the runtime's memory?");
    nopi_detail(err, "run with --memcheck to find a bad write at its source line");
    if (where)
        snprintf(err->diag.where, sizeof err->diag.where, "%s", where);
    return -1;
}

void nopi_server_outputs_held(nopi_server *s, int n)
{
    s->held = n > 1 ? n : 1;
}

void nopi_server_reuse(nopi_server *s)
{
    s->reuse = true;
}

void nopi_server_warm(nopi_server *s, size_t stack_size, int ncores)
{
    s->warm_stack = stack_size;
    s->warm_cores = ncores;
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
    s->pid = pid;
    s->req_fd = req[0];
    s->rec_fd = rec[0];
    return 0;
}

/* Gives up s's reused child: the next request goes to the zygote, which ends the child
 * before it hands the request to another. */
static void drop_lane(nopi_server *s)
{
    if (s->lane_fd >= 0)
        close(s->lane_fd);
    if (s->lane_stat >= 0)
        close(s->lane_stat);
    s->lane_fd = s->lane_stat = -1;
}

/* The threads of s's reused child, as the kernel counts them (/proc/PID/stat's 20th field,
 * after the name in parentheses, which may hold anything); -1 when it cannot be read (the
 * child is gone). */
static long lane_threads(const nopi_server *s)
{
    char buf[1024];
    ssize_t n = pread(s->lane_stat, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    return p ? strtol(p + 1, NULL, 10) : -1;
}

/* Ends the worker and what it left in its group.  wait: reap it now and return its status;
 * otherwise the device reaps it later, while the caller goes on. */
static int stop(nopi_server *s, bool wait)
{
    int status = 0;
    drop_lane(s);
    if (s->pid > 0 && s->zygote && !wait) {   /* done with it: it ends its children, then */
        close(s->req_fd);                      /* itself, at the end of its requests */
        s->req_fd = -1;
        nopi_device_reap(s->dev, s->pid);
    } else if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        if (wait) {
            status = nopi_reap_group(s->pid);
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

int nopi_server_call(nopi_server *s, const char *opname, double budget, int runs, int ncores,
                     const void *req, size_t len, nopi_take_fn *take, void *take_ctx,
                     nop_error *err)
{
    return nopi_server_call_fd(s, opname, budget, runs, ncores, req, len, -1, 0, take,
                               take_ctx, err);
}

/* Closes the descriptors of fds[0, n) that are open, and marks them closed. */
static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
}

/* Waits (until deadline at most) for the zygote's next word: its kind, with *m and the
 * descriptors that came with it (got[0, 3), or -1); 0 when the zygote is gone or said nothing
 * in time (*late then). */
static int hear(nopi_server *s, double deadline, struct nopi_zmsg *m, int got[3], bool *late)
{
    got[0] = got[1] = got[2] = -1;
    *late = false;
    struct pollfd p = { s->req_fd, POLLIN, 0 };
    for (;;) {
        double left = deadline - nopi_now();
        if (left <= 0) {
            *late = true;
            return 0;
        }
        int pr = poll(&p, 1, (int)(left * 1000) + 1);
        if (pr > 0)
            break;
        if (pr < 0 && errno != EINTR)
            return 0;
    }
    char *buf = NULL;
    uint64_t len;
    memset(m, 0, sizeof *m);
    if (nopi_read_request(s->req_fd, &buf, &len, got, 3) && len == sizeof *m)
        memcpy(m, buf, sizeof *m);
    free(buf);
    /* STARTED comes with a pipe and a page (and a lane when children are reused), no other
     * word with any */
    bool both = got[0] >= 0 && got[1] >= 0, lane = got[2] >= 0;
    if (m->kind == ZMSG_STARTED ? !both || lane != s->reuse : both || lane || got[0] >= 0) {
        close_all(got, 3);
        return 0;
    }
    return m->kind;
}

/* Waits for the child on s's lane to say it is back (LANE_WAIT, the lane's receive timeout)
 * and reads every byte waiting there (to a bound: the socket holds less), and returns how
 * many came: the child's word, and whatever its user code wrote there before (which must
 * not keep that word from being written).  0 at its end, on an error or when the child said
 * nothing in time.  The first read waits itself: a poll before it cost the call a system
 * call between the child's word and its next request. */
static size_t drain_lane(nopi_server *s)
{
    char buf[4096];
    size_t got = 0;
    ssize_t n;
    for (int i = 0; i < 128; i++) {
        while ((n = recv(s->lane_fd, buf, sizeof buf, i ? MSG_DONTWAIT : 0)) < 0 &&
               errno == EINTR)
            ;
        if (n <= 0)
            break;
        got += (size_t)n;
        if ((size_t)n < sizeof buf)
            break;   /* a stream socket's read takes all there is: the rest came since */
    }
    return got;
}

/* Sends a request to s's reused child on its lane, once the child has said it is back (it
 * has half a second, as it had when the zygote waited for it), with a record pipe of the
 * request's own (what the child wrote after its last answer reaches no one) and pass.
 * Returns the pipe's read end, or -1 when there is no lane or the child did not take the
 * request (the lane is then dropped, and the request goes to the zygote).  User code can
 * write "back" too, early: the request then waits in the socket until the child reads it,
 * or a thread of that code takes it, which only a child's later requests of its own library
 * can suffer (nothing reaches the parent but records, and `neuronop test` never puts back a
 * child that ran a kernel): a request its child did not answer is that request's failure. */
static int lane_send(nopi_server *s, const void *req, size_t len, int pass, size_t pass_bytes)
{
    if (s->lane_fd < 0)
        return -1;
    /* the pipe is made before the child says it is back, while it is still putting itself
     * back: made after, it held up the request on its way to the child */
    int rec[2] = { -1, -1 };
    if (pipe2(rec, O_CLOEXEC) != 0) {
        drop_lane(s);
        return -1;
    }
    /* Room for an output the size of the inputs (most ops'), best effort: a smaller pipe is
     * only slower.  Not when the pipe's own 64 KB hold it: growing a pipe allocates and
     * zeroes its ring, 30 us of a 250 us call from Python on these VMs. */
    if (pass_bytes > SMALL_PIPE_BYTES)
        fcntl(rec[1], F_SETPIPE_SZ, PIPE_BYTES);
    /* back, and alone: a thread of user code's that outlived the child's own count would
     * take the request, or keep the memfd of the inputs sent with it */
    if (drain_lane(s) == 0 || lane_threads(s) != NOPI_KEPT_THREADS) {
        close(rec[0]);
        close(rec[1]);
        drop_lane(s);
        return -1;
    }
    int fds[2] = { rec[1], pass };
    bool sent = nopi_send_request(s->lane_fd, req, len, fds, pass >= 0 ? 2 : 1) == 0;
    close(rec[1]);
    if (!sent) {
        close(rec[0]);
        drop_lane(s);
        return -1;
    }
    return rec[0];
}

/* Sends a request to the worker, replacing a worker that went away between requests, once;
 * 0, or -1 with err filled. */
static int send_request(nopi_server *s, const void *req, size_t len, int pass, nop_error *err)
{
    /* a worker that dies before it takes the request must not show an earlier one's printf
     * text as this one's (a zygote's children have pages of their own, which they clear) */
    if (!s->zygote)
        atomic_store_explicit(&s->phase->printf_total, 0, memory_order_relaxed);
    for (int tries = 0; s->pid == 0 || nopi_send_request(s->req_fd, req, len, &pass,
                                                         pass >= 0) != 0; tries++) {
        if (s->pid)
            stop(s, true);
        if (tries == 2 || start(s, err) != 0)
            return tries == 2 ? nopi_fault(err, NOP_FAULT_HOST, "the device process ended "
                                           "before it took any work") : -1;
    }
    return 0;
}

/* The phase page whose memfd is fd, mapped: the one kept from the last request when it is
 * the same file (a child put back serves again), else mapped anew; NULL on failure.  Mapping
 * it for every request cost a mapping, a page fault and an unmapping each, on every call. */
static struct nopi_phase_page *child_phase(nopi_server *s, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    if (s->child_phase && st.st_dev == s->child_phase_dev && st.st_ino == s->child_phase_ino)
        return s->child_phase;
    if (s->child_phase)
        munmap(s->child_phase, sizeof *s->child_phase);
    s->child_phase = mmap(NULL, sizeof *s->child_phase, PROT_READ, MAP_SHARED, fd, 0);
    if (s->child_phase == MAP_FAILED)
        s->child_phase = NULL;
    else   /* kept: no process forked later (another library's workers) may inherit it, and
            * the memfd came writable, so such a mapping could be made writable */
        madvise(s->child_phase, sizeof *s->child_phase, MADV_DONTFORK);
    s->child_phase_dev = st.st_dev;
    s->child_phase_ino = st.st_ino;
    return s->child_phase;
}

/* A zygote's child for the request just sent: once the zygote has handed it the request,
 * the descriptor it sends its records on (returned) and its phase page (at *page: s keeps it),
 * and the request's number (*seq); what the zygote says meanwhile of earlier children is
 * past (their requests were answered).  -1 when there is none, with *late when the zygote
 * said nothing in time. */
static int child_records(nopi_server *s, double deadline, struct nopi_phase_page **page,
                         uint32_t *seq, bool *late)
{
    struct nopi_zmsg m;
    int fds[3], kind;
    while ((kind = hear(s, deadline, &m, fds, late)) == ZMSG_ENDED)
        ;
    if (kind != ZMSG_STARTED)
        return -1;
    *seq = m.seq;
    *page = child_phase(s, fds[1]);
    close(fds[1]);
    drop_lane(s);   /* the zygote ends the child of the last one */
    /* a lane that cannot time its waits is not one: no later request waits for ever */
    struct timeval wait = { 0, LANE_WAIT_US };
    if (fds[2] >= 0 && setsockopt(fds[2], SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait) != 0) {
        close(fds[2]);
        fds[2] = -1;
    }
    /* the child's own entry (should it have ended and its pid gone to another process
     * since, its lane is dead: no request goes through it whatever this one counts) */
    char stat[64];
    snprintf(stat, sizeof stat, "/proc/%d/stat", (int)m.status);
    if (fds[2] >= 0 && (m.status <= 0 ||
                        (s->lane_stat = open(stat, O_RDONLY | O_CLOEXEC)) < 0)) {
        close(fds[2]);
        fds[2] = -1;
    }
    s->lane_fd = fds[2];
    s->lane_seq = m.seq;
    if (!*page) {
        close(fds[0]);
        return -1;
    }
    return fds[0];
}

/* The wait status of request seq's child, which has ended without answering it; -1 when
 * the zygote is gone or says nothing in time. */
static int child_status(nopi_server *s, double deadline, uint32_t seq)
{
    struct nopi_zmsg m;
    int fds[3], kind;
    bool late;
    while ((kind = hear(s, deadline, &m, fds, &late)) == ZMSG_ENDED && m.seq != seq)
        ;
    close_all(fds, 3);
    return kind == ZMSG_ENDED ? m.status : -1;
}

/* Who took a request (exchange). */
typedef struct taker {
    uint32_t seq;       /* the number the zygote knows its child by */
    bool on_lane;       /* the reused child of the last request, on its lane */
    bool none;          /* no child: none could be made, or the zygote is gone */
} taker;

/* Sends a request and reads its records with wt (its fields the caller's; its clock started
 * here): on the lane to the reused child when there is one that takes it, else to the worker
 * or to the zygote's next child; *who says which.  -1 when it could not be sent (err
 * filled), else 1 when it ended in time, 0 when not. */
static int exchange(nopi_server *s, nopi_watch *wt, const void *req, size_t len, int pass,
                    size_t pass_bytes, taker *who, nop_error *err)
{
    int fd = -1;
    if (s->posted) {   /* sent already: the zygote's child has it */
        s->posted = false;
        *who = (taker){ 0, false, false };
    } else {
        fd = lane_send(s, req, len, pass, pass_bytes);
        *who = (taker){ 0, fd >= 0, false };
        if (!who->on_lane && send_request(s, req, len, pass, err) != 0)
            return -1;
    }
    nopi_watch_start(wt);
    struct nopi_phase_page *page = NULL;
    bool late = false;
    if (who->on_lane) {   /* the child of the last request has it */
        page = s->child_phase;
        who->seq = s->lane_seq;
    } else if (s->zygote) {
        fd = child_records(s, wt->limit, &page, &who->seq, &late);
    } else {
        fd = s->rec_fd;
    }
    if (fd < 0) {
        who->none = wt->malformed = !late;   /* said by the caller */
        return !late;
    }
    if (page) {
        wt->phase = page;
        wt->seq = 0;
    }
    bool in_time = nopi_watch_read(wt, fd);
    if (s->zygote)
        close(fd);   /* whatever the child writes after DONE reaches no one */
    return in_time;
}

_Static_assert(sizeof(struct nopi_phase_page) == 33 * 4096, "the hostile fixture's size");

/* The printf text of the run a worker was in when it died (or was stopped), from its phase
 * page, taken as its records would have brought it: the last of it, as much as the device's
 * ring holds, and whether older text was lost.  The page is the worker's to write: every
 * index is bounded here, whatever it says. */
static void take_last_printf(const nopi_server *s, const struct nopi_phase_page *p,
                             nopi_take_fn *take, void *ctx)
{
    if (!p || !take)
        return;
    uint64_t total = atomic_load_explicit(&p->printf_total, memory_order_acquire);
    size_t ring = (size_t)nopi_device_profile(s->dev)->printf_buffer;
    size_t n = ring < NOPI_PHASE_PRINTF ? ring : NOPI_PHASE_PRINTF;
    if (total < n)
        n = (size_t)total;
    char *text = n ? malloc(n) : NULL;
    if (!text)
        return;
    for (size_t i = 0; i < n; i++)
        text[i] = p->printf_ring[(total - n + i) % NOPI_PHASE_PRINTF];
    take(ctx, NOPI_REC_PRINTF, text, n, NULL);   /* refused when its records had it */
    if (total > n)
        take(ctx, NOPI_REC_PRINTF_LOST, NULL, 0, NULL);
    free(text);
}

int nopi_server_post(nopi_server *s, const void *req, size_t len, nop_error *err)
{
    if (!s->zygote || s->reuse || s->posted)
        return nopi_fault(err, NOP_FAULT_HOST, "a request posted to a server that cannot "
                          "take one (a neuronop bug)");
    if (len > MAX_REQUEST)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a request of %zu bytes to the "
                         "device process is too large", len);
    if (send_request(s, req, len, -1, err) != 0)
        return -1;
    s->posted = true;
    return 0;
}

void nopi_server_forget(nopi_server *s)
{
    if (!s->posted)
        return;
    s->posted = false;
    /* the zygote's word that a child took it (at once: its child was ready), whose record
     * pipe is closed unread, and the word that it is given up: the zygote kills that child
     * now, not when the next request comes (which may be many cases later, or never: it
     * would compute on, beside them, to its own time limit).  A zygote that says nothing in
     * time, or cannot be told, is not trusted again: it is killed, as one that misses a
     * request's deadline is (asked to end, it would be waited for by the next start) */
    struct nopi_phase_page *page;
    uint32_t seq;
    bool late;
    int fd = child_records(s, nopi_now() + FORGET_WAIT, &page, &seq, &late);
    if (fd >= 0)
        close(fd);
    if (fd < 0 || nopi_send_request(s->req_fd, NULL, 0, NULL, 0) != 0)
        stop(s, true);
}

int nopi_server_call_fd(nopi_server *s, const char *opname, double budget, int runs,
                        int ncores, const void *req, size_t len, int pass, size_t pass_bytes,
                        nopi_take_fn *take, void *take_ctx, nop_error *err)
{
    if (req && s->posted)   /* a new request: the posted one is given up */
        nopi_server_forget(s);
    if (len > MAX_REQUEST)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a request of %zu bytes to the "
                         "device process is too large", len);
    nop_device_opts o = nopi_device_opts(s->dev);
    /* a one-shot worker's phase page as it was before this request: what changes is the
     * request's (a zygote's child has a page of its own) */
    nopi_watch wt = { .dev = s->dev, .phase = s->phase, .seq = atomic_load(&s->phase->seq),
                      .op = opname, .budget = budget, .timeout = o.timeout,
                      .runs = runs > 0 ? runs : 0,
                      .ncores = ncores > 0 && ncores < nopi_device_max_cores(s->dev)
                                ? ncores : nopi_device_max_cores(s->dev),
                      .take = take, .ctx = take_ctx, .max_record = s->max_record / s->held,
                      .held = s->held };
    taker who;
    int in_time = exchange(s, &wt, req, len, pass, pass_bytes, &who, err);
    if (in_time < 0)
        return -1;
    bool answered = in_time && !wt.malformed && wt.done;
    if (!answered || wt.result.retire || wt.result.rc != 0)
        drop_lane(s);   /* its child is not trusted with another request */
    if (answered) {
        if (!s->zygote && (wt.result.retire || wt.result.rc != 0))
            stop(s, false);
        if (wt.result.rc != 0 && err) {
            *err = wt.result.err;
            if (!err->diag.where[0])   /* trapped outside any core (a wrecked runtime) */
                snprintf(err->diag.where, sizeof err->diag.where, "%s", wt.where);
        }
        /* a trapped call ended the run before its printf records were sent (the handler
         * sends only DONE): the text is in the phase page, as after a death */
        if (wt.result.trapped)
            take_last_printf(s, wt.phase, take, take_ctx);
        return wt.result.rc == 0 ? 0 : -1;
    }
    int status = -1;
    if (s->zygote && in_time && !wt.malformed)   /* its child ended without answering */
        status = child_status(s, wt.limit, who.seq);
    if (status == -1)
        status = stop(s, true);
    if (!in_time) {
        nopi_fault(err, NOP_FAULT_TIMEOUT, "timeout: it did not finish within its time limit "
                   "and was stopped");
        nopi_detail(err, "look for a loop that never ends, or give it more time with "
                    "--timeout SECONDS (a kernel inside a long runtime call, a tensor-library "
                    "op on a large tensor, is stopped only here, at its phase's deadline)");
    } else if (who.none) {
        nopi_fault(err, NOP_FAULT_HOST, "the device process ended before it took any work");
    } else if (wt.malformed && wt.oversized) {
        nopi_fault(err, NOP_FAULT_RULE, "the output is %llu bytes, more than the %llu one may "
                   "have here (half the memory neuronop may use%s)",
                   (unsigned long long)wt.oversized, (unsigned long long)wt.max_record,
                   wt.held > 1 ? ", shared by the outputs it holds at once" : "");
        nopi_detail(err, "give it smaller inputs, or run it where neuronop has more memory "
                    "(a container's memory limit counts)");
    } else if (wt.malformed) {
        nopi_malformed(err, NULL);
    } else if (WIFSIGNALED(status)) {
        nopi_fault(err, NOP_FAULT_WORKER, "the device process died: %s (signal %d)",
                   signal_name(WTERMSIG(status)), WTERMSIG(status));
        nopi_detail(err, "%s", signal_hint(WTERMSIG(status)));
    } else {
        nopi_fault(err, NOP_FAULT_WORKER, "user code ended the device process (exit status "
                   "%d) before the op finished", WEXITSTATUS(status));
        nopi_detail(err, "kernels, shape functions and references must return, not exit");
    }
    if (err && !err->diag.where[0])
        snprintf(err->diag.where, sizeof err->diag.where, "%s", wt.where);
    if (err)   /* under the message, as the device's own diagnostics are (neuronop(1)) */
        nopi_diag_indent(&err->diag);
    if (!who.none)
        take_last_printf(s, wt.phase, take, take_ctx);
    return -1;
}

void nopi_server_free(nopi_server *s)
{
    if (!s)
        return;
    stop(s, false);
    munmap(s->phase, sizeof *s->phase);
    if (s->child_phase)
        munmap(s->child_phase, sizeof *s->child_phase);
    free(s->library);
    free(s->folder);
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

int nopi_sandbox_call(nop_device *dev, const char *opname, const char *library, double budget,
                      int runs, int ncores, nopi_work_fn *work, void *work_ctx, nopi_take_fn *take,
                      void *take_ctx, nop_error *err)
{
    once o = { work, work_ctx };
    nopi_server *s;
    if (server_new(&s, dev, serve_once, &o, false, err) != 0)
        return -1;
    int rc = nopi_server_library(s, library, err);
    if (rc == 0)
        rc = nopi_server_call(s, opname, budget, runs, ncores, NULL, 0, take, take_ctx, err);
    nopi_server_free(s);
    return rc;
}
