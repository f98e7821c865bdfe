/*
 * cmd-serve.c - `neuronop __serve FD [DEVICE OPTIONS]`: the supervisor behind the Python
 * package (python/neuronop/_client.py starts it and is its one client).  Not a command users
 * type, so it is not in the command table.
 *
 * Python must not fork per call (forking a process that has torch loaded costs about 17 ms),
 * so the package starts this small process once, with exec, and asks it to run ops.  It owns
 * the virtual device, made with isolate on: every kernel, shape function and reference runs
 * in the device's seccomp-confined worker, as under `neuronop run`, and this process keeps
 * the verdicts.  Libraries are only ever described here (nop_library_describe), never loaded:
 * the worker loads them.  Under NEURONOP_SANDBOX=off this process runs user code itself; it
 * then loads each library at its first call and keeps it loaded (serve_libs.c).
 *
 * The protocol: one SOCK_SEQPACKET message per request and per reply on descriptor FD, all
 * integers little-endian (this is an x86-64 tool), each message starting with struct hdr.
 * Tensors travel through an arena: a memfd that Python makes, fills and sends once (ARENA,
 * with SCM_RIGHTS), and sends again only when it needs a larger one.  This process maps it
 * read-only from a read-only descriptor (so neither it nor a worker it forks can write
 * through the mapping, nor make it writable), wraps the inputs in place
 * (nop_tensor_wrap) and writes an output with pwrite where Python asked for it.
 *
 *   ARENA  (fd)  u64 size                          -> status
 *   LOAD   path                                    -> u32 lib, u32 0, then ITEM_JSON (its
 *                                                     self-description, nop_library_json)
 *   CALL   struct call_req, nargs x struct call_arg -> struct call_rep, items
 *   FETCH  u64 out_offset                          -> struct call_rep (the held output)
 *
 * A reply's status is REP_OK, REP_ERROR (an ITEM_ERROR says why) or REP_ROOM: the output
 * does not fit where Python asked; this process holds it until a FETCH names a place that
 * fits (after Python sent a larger arena).  A reply starts with its request's fixed part
 * (ARENA has none) whatever its status; items follow: struct item, then its bytes.  Device
 * warnings come as ITEM_DIAG, kernel printf text as ITEM_PRINTF.
 *
 * It ends when Python closes its end of the socket (Python exited or dropped it), and when
 * the Python process ends, even in a call that spins (die_with_python): its workers die
 * with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"
#include "serve.h"

static struct device_cli dc = { .spec = &serve_spec };
static bool profile_opt;
static const struct option_spec options[] = {
    DEVICE_OPTIONS(dc),
    OPTION(0, "profile", OPT_FLAG, &profile_opt, NULL,
           "time runtime calls, so calls that ask get the cost model's device time"),
    OPTIONS_END,
};

const struct command_spec serve_spec = {
    "__serve", "FD [options]",
    "Serve the Python package's requests on socket descriptor FD (internal).",
    options, 1, 1, "the Python package's supervisor (internal)",
    NULL,
};

/* ---- the server ------------------------------------------------------------------------- */

typedef struct server {
    int fd;
    nop_profile *profile;
    nop_device *dev;
    served_lib libs[MAX_LIBS];
    int nlibs;
    bool here;                    /* the sandbox is off: user code runs in this process */
    int arena_fd;                 /* read-write: outputs are written with pwrite */
    const unsigned char *arena;   /* mapped read-only */
    size_t arena_size;
    nop_run_result held;          /* an output waiting for room (REP_ROOM) */
    bool have_held;
    double host_ns;               /* the host's speed for the cost model; 0: not measured */
    nop_diag diags[MAX_DIAGS];    /* this request's device warnings */
    int ndiags, dropped;
} server;

static void collect(void *ctx, const nop_diag *d)
{
    server *s = ctx;
    if (s->ndiags < MAX_DIAGS)
        s->diags[s->ndiags++] = *d;
    else
        s->dropped++;
}

static void put_diags(server *s, buf *b)
{
    for (int i = 0; i < s->ndiags; i++)
        reply_diag(b, ITEM_DIAG, &s->diags[i], 0, 0);
    if (s->dropped) {
        nop_diag d = { .severity = NOP_SEV_WARNING };
        snprintf(d.msg, sizeof d.msg, "%d more warnings of this call were not shown",
                 s->dropped);
        reply_diag(b, ITEM_DIAG, &d, 0, 0);
    }
    s->ndiags = s->dropped = 0;
}

static int set_arena(server *s, int fd, const unsigned char *body, size_t len, buf *b)
{
    uint64_t size;
    if (fd < 0 || len != sizeof size) {
        if (fd >= 0)
            close(fd);
        reply_protocol(b, "an arena request needs its memfd and its size");
        return REP_ERROR;
    }
    memcpy(&size, body, sizeof size);
    /* a read-only description of the same memfd: a mapping made from it cannot be made
     * writable, in this process or in a worker forked from it */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    off_t end = lseek(fd, 0, SEEK_END);
    void *map = MAP_FAILED;
    if (ro >= 0 && end >= 0 && (uint64_t)end >= size && size > 0)
        map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, ro, 0);
    if (ro >= 0)
        close(ro);
    if (map == MAP_FAILED) {
        close(fd);
        reply_protocol(b, "cannot map the arena Python sent");
        return REP_ERROR;
    }
    madvise(map, (size_t)size, MADV_DONTFORK);   /* workers forked later have no use for it */
    if (s->arena)
        munmap((void *)s->arena, s->arena_size);
    if (s->arena_fd >= 0)
        close(s->arena_fd);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    s->arena_fd = fd;
    s->arena = map;
    s->arena_size = (size_t)size;
    return REP_OK;
}

/* Runs a LOAD; its reply is the library's id (UINT32_MAX when it failed: the reply always
 * starts with its fixed part, which is how Python reads it), then the items. */
static int load(server *s, const unsigned char *body, size_t len, buf *b)
{
    char path[4096];
    uint32_t id[2] = { UINT32_MAX, 0 };
    size_t at = b->len;
    reply_put(b, id, sizeof id);
    if (len == 0 || len >= sizeof path || memchr(body, '\0', len)) {
        reply_protocol(b, "a load request needs a library path");
        return REP_ERROR;
    }
    memcpy(path, body, len);
    path[len] = '\0';
    /* a library loaded again (custom_op.load run again, after a rebuild or not) takes its
     * own slot and id back, so loading one library any number of times holds one slot */
    int slot = s->nlibs;
    for (int i = 0; i < s->nlibs; i++)
        if (strcmp(nop_library_path(s->libs[i].described), path) == 0)
            slot = i;
    if (slot == MAX_LIBS) {
        reply_protocol(b, "too many libraries loaded in one process");
        return REP_ERROR;
    }
    nop_library *lib;
    nop_error err;
    if (nop_library_describe(&lib, path, &err) != 0) {   /* no code of it runs here */
        reply_error(b, &err);
        return REP_ERROR;
    }
    char why[sizeof err.diag.msg], detail[sizeof err.diag.detail] = "";
    if (dc.memcheck && !nop_library_memcheck(lib)) {   /* as `neuronop run --memcheck` */
        snprintf(why, sizeof why, "'%.*s' was built without --memcheck",
                 utf8_prefix(path, strlen(path), 900), path);
        snprintf(detail, sizeof detail, "under --memcheck ops run memcheck builds: load the "
                 "library with custom_op.load, or build it with 'neuronop build --memcheck' "
                 "(custom_op.load_library then loads the libNAME.memcheck.so beside it)");
    } else if (device_cli_cores_fit(&dc, lib, s->profile, why, sizeof why) == 0) {
        why[0] = '\0';   /* a single-core library under --cores is refused as run refuses it */
    }
    if (why[0]) {
        nop_library_close(lib);
        err = (nop_error){ .kind = NOP_ERR_INPUT, .diag.severity = NOP_SEV_ERROR };
        snprintf(err.diag.msg, sizeof err.diag.msg, "%s", why);
        snprintf(err.diag.detail, sizeof err.diag.detail, "%s", detail);
        reply_error(b, &err);
        return REP_ERROR;
    }
    char *json = nop_library_json(lib);
    if (!json) {
        nop_library_close(lib);
        reply_protocol(b, "out of memory");
        return REP_ERROR;
    }
    id[0] = (uint32_t)slot;
    if (slot < s->nlibs)
        served_close(&s->libs[slot]);
    else
        s->nlibs++;
    s->libs[slot] = (served_lib){ .described = lib };
    if (!b->oom)
        memcpy(b->p + at, id, sizeof id);
    reply_item(b, ITEM_JSON, json, strlen(json));
    free(json);
    return REP_OK;
}

/* Writes the held output at offset, or says how much room it needs. */
static int deliver(server *s, uint64_t offset, struct call_rep *rep)
{
    const nop_tensor *t = s->held.output;
    size_t n = nop_tensor_nbytes(t);
    rep->dtype = (int32_t)nop_tensor_dtype(t);
    rep->ndim = nop_tensor_ndim(t);
    memcpy(rep->sizes, nop_tensor_sizes(t), sizeof(int64_t) * (size_t)rep->ndim);
    rep->offset = offset;
    rep->nbytes = n;
    if (offset > s->arena_size || n > s->arena_size - offset)
        return REP_ROOM;
    const char *p = nop_tensor_data(t);
    for (size_t done = 0; done < n;) {
        ssize_t k = pwrite(s->arena_fd, p + done, n - done, (off_t)(offset + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return REP_OK;   /* the caller clears s->held once it has sent what else it holds */
}

/* Names op (its name) of lib in d's where as Python names it, "namespace::op" (a C
 * library's namespace is its name). */
static void op_where(const nop_library *lib, const char *op, nop_diag *d)
{
    const char *ns = nop_library_namespace(lib);
    snprintf(d->where, sizeof d->where, "%.100s::%.100s", ns ? ns : nop_library_name(lib), op);
}

/* Turns the request's arguments into values over the arena; -1 with b filled. */
static int make_values(server *s, const nop_library *lib, int op, const struct call_arg *a,
                       uint32_t n, nop_value *vals, nop_tensor **tensors, buf *b)
{
    nop_opinfo info;
    nop_library_op(lib, op, &info);
    for (uint32_t k = 0; k < n; k++) {
        vals[k] = (nop_value){ .type = (enum nop_argtype)a[k].type, .d = a[k].d, .i = a[k].i,
                               .is_int = a[k].is_int != 0 };
        if (a[k].type < NOP_ARG_TENSOR || a[k].type > NOP_ARG_INT64) {
            reply_protocol(b, "an argument of an unknown type");
            return -1;
        }
        if (a[k].type != NOP_ARG_TENSOR)
            continue;
        if (a[k].ndim < 0 || a[k].ndim > MAX_DIMS || a[k].offset > s->arena_size ||
            a[k].dtype < 0 || a[k].dtype > NOP_U8) {
            reply_protocol(b, "a tensor argument outside the arena");
            return -1;
        }
        nop_error err;
        if (nop_tensor_wrap(&tensors[k], (enum nop_dtype)a[k].dtype, a[k].ndim, a[k].sizes,
                            s->arena + a[k].offset, s->arena_size - a[k].offset, &err) != 0) {
            /* a shape the device cannot have: said of the op and the argument, as Python's
             * own argument checks say it (a new user's find: it named neither) */
            op_where(lib, info.name, &err.diag);
            char msg[sizeof err.diag.msg];
            snprintf(msg, sizeof msg, "argument %u: %.*s", k + 1,
                     utf8_prefix(err.diag.msg, strlen(err.diag.msg), 990), err.diag.msg);
            memcpy(err.diag.msg, msg, sizeof msg);
            reply_error(b, &err);
            return -1;
        }
        vals[k].tensor = tensors[k];
    }
    return 0;
}

/* An input error of a call to op i of described whose file was rebuilt since Python read it,
 * with the op taking other arguments: says so, in the words of the package's own check (the
 * worker, which reads the file as it is, said only that an argument had the wrong type,
 * where Python must be restarted to call the op as it now is). */
static void rebuilt_signature(const nop_library *described, int i, nop_error *err)
{
    nop_library *now;
    nop_opinfo was, is;
    if (!nop_library_changed(described) ||
        nop_library_describe(&now, nop_library_path(described), NULL) != 0)
        return;
    int j;
    if (nop_library_op(described, i, &was) == 0 && (j = nop_library_find_op(now, was.name)) >= 0 &&
        nop_library_op(now, j, &is) == 0 &&
        (is.nargs != was.nargs || memcmp(is.args, was.args, (size_t)is.nargs * sizeof *is.args))) {
        char sig[256];
        nop_signature(&is, sig, sizeof sig);
        *err = (nop_error){ .kind = NOP_ERR_INPUT, .diag.severity = NOP_SEV_ERROR };
        op_where(described, was.name, &err->diag);
        const char *path = nop_library_path(described);   /* (cut where a character begins) */
        snprintf(err->diag.msg, sizeof err->diag.msg, "'%.*s' was rebuilt since the op was "
                 "loaded, as %s: torch cannot change a defined op's schema; restart Python to "
                 "call the new one, or rebuild the library as it was",
                 utf8_prefix(path, strlen(path), 500), path, sig);
    }
    nop_library_close(now);
}

/* Runs a CALL; its reply is the fixed struct call_rep, then the items. */
static int call(server *s, const unsigned char *body, size_t len, buf *b)
{
    struct call_req rq;
    struct call_rep rep = { .device_seconds = -1 };
    size_t at = b->len;   /* rep goes first, filled in at the end */
    reply_put(b, &rep, sizeof rep);
    if (len < sizeof rq) {
        reply_protocol(b, "a call request is too short");
        return REP_ERROR;
    }
    memcpy(&rq, body, sizeof rq);
    if (rq.nargs > NOP_MAX_ARGS || len != sizeof rq + rq.nargs * sizeof(struct call_arg) ||
        rq.lib >= (uint32_t)s->nlibs || !s->arena ||
        (int)rq.op >= nop_library_op_count(s->libs[rq.lib].described)) {
        reply_protocol(b, "a call request that names no loaded op, or has no arena");
        return REP_ERROR;
    }
    if (s->have_held) {   /* Python did not fetch it: drop it */
        nop_run_result_clear(&s->held);
        s->have_held = false;
    }
    struct call_arg args[NOP_MAX_ARGS];
    memcpy(args, body + sizeof rq, rq.nargs * sizeof *args);
    nop_value vals[NOP_MAX_ARGS];
    nop_tensor *tensors[NOP_MAX_ARGS] = { 0 };
    int status = REP_ERROR;
    nop_error err;
    if (make_values(s, s->libs[rq.lib].described, (int)rq.op, args, rq.nargs, vals, tensors,
                    b) != 0)
        goto out;
    const nop_library *described = s->libs[rq.lib].described;
    const nop_library *lib = served_runnable(s->libs, s->nlibs, (int)rq.lib, s->here, &err);
    int op = (int)rq.op;
    if (lib && lib != described) {   /* loaded here, maybe from a rebuild: the op is the
                                      * one Python named, wherever the rebuild put it */
        nop_opinfo info;
        nop_library_op(described, op, &info);
        if ((op = nop_library_find_op(lib, info.name)) < 0) {
            err = (nop_error){ .kind = NOP_ERR_INPUT, .diag.severity = NOP_SEV_ERROR };
            const char *path = nop_library_path(lib);
            snprintf(err.diag.msg, sizeof err.diag.msg, "'%.*s' no longer has op '%s': it "
                     "was rebuilt without it since it was loaded",
                     utf8_prefix(path, strlen(path), 900), path, info.name);
            lib = NULL;
        }
    }
    int rc = lib ? nop_device_run(s->dev, lib, op, vals, (int)rq.nargs, &s->held, &err) : -1;
    if (rc != 0 && lib && err.kind == NOP_ERR_INPUT)
        rebuilt_signature(described, (int)rq.op, &err);
    rep.host_seconds = s->held.seconds;
    if (rc == 0 && (rq.flags & CALL_PROFILE)) {
        nop_error serr;
        if (s->host_ns > 0 || nop_host_speed(NULL, &s->host_ns, &serr) == 0) {
            nop_model m;
            nop_model_run(s->profile, &s->held, s->host_ns, &m);
            rep.device_seconds = m.seconds;
        }
    }
    if (rc == 0) {
        s->have_held = true;
        status = deliver(s, rq.out_offset, &rep);
        if (status < 0) {
            status = REP_ERROR;
            nop_diag d = { .severity = NOP_SEV_ERROR };
            snprintf(d.msg, sizeof d.msg, "cannot write the output into the arena: %s",
                     strerror(errno));
            reply_diag(b, ITEM_ERROR, &d, NOP_ERR_NOMEM, NOP_FAULT_NONE);
        }
    } else {
        reply_error(b, &err);
    }
    put_diags(s, b);
    const char *text = s->held.printf_text;
    if (text && text[0])
        reply_item(b, ITEM_PRINTF, text, strlen(text));
    if (s->held.printf_lost) {
        nop_diag d = { .severity = NOP_SEV_WARNING };
        snprintf(d.msg, sizeof d.msg, "the kernel's printf output overflowed the device's "
                 "buffer: its oldest lines are lost");
        reply_diag(b, ITEM_DIAG, &d, 0, 0);
    }
    if (status != REP_ROOM) {
        nop_run_result_clear(&s->held);
        s->have_held = false;
    } else {   /* keep only the output, for a FETCH */
        free(s->held.printf_text);
        s->held.printf_text = NULL;
    }
out:
    if (!b->oom)
        memcpy(b->p + at, &rep, sizeof rep);
    for (uint32_t k = 0; k < rq.nargs; k++)
        nop_tensor_unwrap(tensors[k]);
    return status;
}

static int fetch(server *s, const unsigned char *body, size_t len, buf *b)
{
    uint64_t offset;
    struct call_rep rep = { .device_seconds = -1 };
    if (len != sizeof offset || !s->have_held) {
        reply_put(b, &rep, sizeof rep);
        reply_protocol(b, "a fetch request with no output waiting");
        return REP_ERROR;
    }
    memcpy(&offset, body, sizeof offset);
    int status = deliver(s, offset, &rep);
    reply_put(b, &rep, sizeof rep);
    if (status == REP_OK) {
        nop_run_result_clear(&s->held);
        s->have_held = false;
    }
    if (status < 0) {
        reply_protocol(b, "cannot write the output into the arena");
        return REP_ERROR;
    }
    return status;
}

/* Receives one request into m (MAX_MESSAGE bytes) and any descriptor sent with it; the
 * length, 0 at the end, -1 on an error.
 *
 * It waits for the request in poll, which takes nothing off the socket, and only then
 * receives it.  Python tells a supervisor that ended before a request reached it (it sends
 * the request to a new one) from one that ended during it (SupervisorError) by what its
 * receive says: ECONNRESET when the request was left unread, end-of-file when it was taken.
 * A process killed while it waits in recvmsg looks at the queue once more as the kill wakes
 * it, and takes a request sent after the kill (while it waits for a CPU) before it dies:
 * unanswered, as if it had died running it.  Killed in poll, it dies with the request still
 * queued; it only ever takes one when it is alive, back from poll. */
static ssize_t receive(int fd, unsigned char *m, int *passed)
{
    union { struct cmsghdr h; char space[CMSG_SPACE(sizeof(int))]; } ctl;
    struct iovec iov = { m, MAX_MESSAGE };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
                          .msg_controllen = sizeof ctl.space };
    struct pollfd p = { fd, POLLIN, 0 };
    *passed = -1;
    while (poll(&p, 1, -1) < 0)
        if (errno != EINTR)
            return -1;
    ssize_t n;
    do
        n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(passed, CMSG_DATA(c), sizeof(int));
    return n;
}

static int serve(server *s)
{
    unsigned char *m = malloc(MAX_MESSAGE);
    if (!m)
        return report_nomem();
    for (;;) {
        int passed;
        ssize_t n = receive(s->fd, m, &passed);
        if (n <= 0)
            break;   /* Python has gone: nothing is left to serve */
        struct hdr h;
        buf b = { 0 };
        reply_put(&b, &h, sizeof h);   /* filled in below */
        int status = REP_ERROR;
        if ((size_t)n < sizeof h) {
            reply_protocol(&b, "a request shorter than its header");
            memset(&h, 0, sizeof h);
        } else {
            memcpy(&h, m, sizeof h);
            const unsigned char *body = m + sizeof h;
            size_t len = (size_t)n - sizeof h;
            if (h.magic != MAGIC)
                reply_protocol(&b, "a request without the protocol's magic number");
            else if (h.type == REQ_ARENA) {
                int afd = passed;   /* the arena keeps it (or set_arena closes it) */
                passed = -1;
                status = set_arena(s, afd, body, len, &b);
            }
            else if (h.type == REQ_LOAD)
                status = load(s, body, len, &b);
            else if (h.type == REQ_CALL)
                status = call(s, body, len, &b);
            else if (h.type == REQ_FETCH)
                status = fetch(s, body, len, &b);
            else
                reply_protocol(&b, "a request of an unknown type");
        }
        if (passed >= 0)
            close(passed);
        if (b.oom) {
            free(b.p);
            free(m);
            return report_nomem();
        }
        struct hdr rh = { MAGIC, h.type, status, 0 };
        memcpy(b.p, &rh, sizeof rh);
        ssize_t k;
        do
            k = send(s->fd, b.p, b.len, MSG_NOSIGNAL);
        while (k < 0 && errno == EINTR);
        free(b.p);
        if (k < 0)
            break;
    }
    free(m);
    return 0;
}

/* ---- dying with Python ------------------------------------------------------------------ */

static pid_t python;   /* the process that made the socket pair and started this one */

static void parent_ended(int sig)
{
    (void)sig;
    if (getppid() != python)
        _exit(STATUS_OK);   /* as at the socket's end; the workers die with this process */
}

/* Makes this process end when Python does, whatever this process is doing then (waiting on
 * a call that spins for its --timeout, say): false when Python is not its parent, or has
 * ended already.  Python is the process that made the socket pair (SO_PEERCRED).  The
 * signal comes when the Python thread that started this process ends, not only when the
 * process does (a script's first call may come from a thread it later ends), so the handler
 * ends this process only when its parent has changed.  Checked once more after the prctl:
 * Python may have ended before it. */
static bool die_with_python(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return false;
    python = cred.pid;
    /* SA_ONSTACK: with the sandbox off, kernels run in this process on stacks of 6 KB */
    struct sigaction sa = { .sa_handler = parent_ended, .sa_flags = SA_RESTART | SA_ONSTACK };
    sigemptyset(&sa.sa_mask);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR1);
    if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigprocmask(SIG_UNBLOCK, &one, NULL) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGUSR1) != 0)
        return false;
    return getppid() == python;
}

int cmd_serve(int argc, char **argv)
{
    char **args;
    int nargs;
    int rc = parse_options(&serve_spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    char *end;
    long fd = strtol(args[0], &end, 10);
    free(args);
    int type = 0;
    socklen_t tl = sizeof type;
    if (*end || fd < 0 || fd > 1 << 20 ||
        getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_SEQPACKET) {
        report_plain_error("neuronop __serve: FD must be a SOCK_SEQPACKET socket descriptor");
        free_option_lists(&serve_spec);
        return STATUS_USAGE;
    }
    if (!die_with_python((int)fd)) {
        report_plain_error("neuronop __serve: the process that made socket FD must be its "
                           "parent, and alive");
        free_option_lists(&serve_spec);
        return STATUS_USAGE;
    }
    /* Ctrl-C and Ctrl-\ go to the terminal's whole foreground process group: this process
     * and its workers too, which then died under the call Python was waiting for (a
     * SupervisorError, even when the script's own SIGINT handler meant to let the step finish).
     * The script decides what the keys do: an interrupted call stops this process itself
     * (_client.py), and this process ends with Python however Python ends.  Ignored here, they
     * are ignored in the workers forked from it too (worker.c keeps what is ignored). */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    server s = { .fd = (int)fd, .arena_fd = -1, .here = !sandbox_on() };
    dc.diag = collect;
    dc.diag_ctx = &s;
    dc.profile = profile_opt;
    dc.keep_worker = true;   /* one zygote for the session: no fork of this process per call */
    rc = device_cli_open(&dc, &s.profile, &s.dev);
    free_option_lists(&serve_spec);
    if (rc == 0)
        rc = serve(&s);
    nop_run_result_clear(&s.held);
    for (int i = 0; i < s.nlibs; i++)
        served_close(&s.libs[i]);
    nop_device_free(s.dev);   /* before its profile */
    nop_profile_free(s.profile);
    if (s.arena)
        munmap((void *)s.arena, s.arena_size);
    if (s.arena_fd >= 0)
        close(s.arena_fd);
    return rc;
}
