/*
 * server.h - what the two sides of a worker process share inside isolate/ (private to it): a
 * server's description, which the worker inherits at its fork, and the request format.
 */
#ifndef NEURONOP_SERVER_H
#define NEURONOP_SERVER_H

#include "sandbox.h"

#define MAX_REQUEST (1u << 20)     /* requests are small descriptions of work */
#define PIPE_BYTES (1 << 20)       /* a run's output fits the pipe: no round trips */
#define SMALL_PIPE_BYTES (48 << 10) /* inputs up to this size: an output as large, with its
                                     * records, fits a new pipe (Linux: 64 KB) */

/* What a zygote tells its parent, on the request socket (sent as a request is).  The parent
 * sends it requests there, and an empty one when it gives up the last (its child is killed
 * at once: it never answers one). */
enum nopi_zmsg_kind {
    ZMSG_STARTED = 1,   /* the request went to a child: the read end of its record pipe
                         * and its phase page (a memfd) come with this, and, from a server
                         * that reuses its children, the child's request socket (its lane:
                         * the parent sends it its later requests itself) */
    ZMSG_NOFORK,        /* the request got no child (it could not be made, or died) */
    ZMSG_ENDED,         /* request seq's child has ended, with wait status status */
};
struct nopi_zmsg {
    int32_t kind;       /* enum nopi_zmsg_kind */
    int32_t status;     /* ZMSG_ENDED: the child's wait status; ZMSG_STARTED: its pid */
    uint32_t seq;       /* the request the child served (the zygote counts them from 1; a
                         * child on a lane, the first that came through the zygote) */
};

struct nopi_server {
    nop_device *dev;
    nopi_serve_fn *serve;
    void *ctx;
    bool zygote;                   /* children of a zygote serve it (else one-shot, inline) */
    size_t warm_stack;             /* a zygote warms a device for its children: kernels'
                                    * stack size, ... */
    int warm_cores;                /* ... on this many cores (nopi_server_warm) */
    nop_device *proto;             /* in a zygote: that device, which each child inherits */
    nopi_prepare_fn *prepare;      /* what a child does before its request comes, or NULL */
    char *library;                 /* the library file its workers load, or NULL */
    char *folder;                  /* its library folder, when the caller knows it, or NULL
                                    * (nopi_usercode_confine then finds it) */
    bool reuse;                    /* a child serves requests until it cannot be put back */
    struct nopi_phase_page *phase;   /* MAP_SHARED: the worker's current phase */
    struct nopi_phase_page *child_phase;   /* a zygote's child's page, mapped when it came
                                            * with a request, and kept while the same child
                                            * (the same memfd) serves the next: or NULL */
    dev_t child_phase_dev;
    ino_t child_phase_ino;
    uint64_t max_record;           /* nopi_watch_record_bound(), once */
    int held;                      /* nopi_server_outputs_held's n: 1 unless told */
    int lane_fd;                   /* a reused child's request socket (its lane: the
                                    * zygote gave it with the child's first request), or -1 */
    uint32_t lane_seq;             /* the number of that first request, which the zygote's
                                    * ZMSG_ENDED for the child carries */
    int lane_stat;                 /* that child's /proc/PID/stat, or -1: the parent counts
                                    * its threads there before each request it sends it */
    bool posted;                   /* a request went with nopi_server_post: its child
                                    * works, and the next call reads what it sends */
    pid_t pid;                     /* the worker (or zygote), 0 when none is running */
    int req_fd, rec_fd;            /* the parent's ends: requests out (and, from a zygote,
                                    * what became of its children in), records in (a
                                    * one-shot worker's; a zygote's child has its own) */
};

/* The threads of a reused child between requests: its own only (worker.c ends its device's
 * threads, the watchdog too, before it puts itself back).  The parent counts them itself
 * before it sends the child a request (sandbox.c): a thread user code left running can hide from the
 * child's own count, which reads memory that thread can write (a red team's did, and held
 * on to another library's inputs), but not from the kernel's. */
#define NOPI_KEPT_THREADS 1

/* The payloads of a run's records (wire.c writes them, take.c reads them). */
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

/* worker.c: the worker (or zygote) forked for s: serves requests on req_fd, sends records on
 * rec_fd (a zygote's children on pipes of their own), until its parent closes the socket.
 * Never returns. */
_Noreturn void nopi_worker_main(nopi_server *s, pid_t parent, int req_fd, int rec_fd);

#define NOPI_MAX_PASS 3            /* descriptors that may come with a message */
/* channel.c: sends a request (its length, then its bytes, with the npass descriptors at pass
 * attached) on socket fd; -1 when the other end is gone. */
int nopi_send_request(int fd, const void *req, size_t len, const int *pass, int npass);
/* channel.c: reads one request from socket fd into *req (realloc'd), and the descriptors that
 * came with it into got[0, ngot) (-1: none; any more are closed); false when the sender is
 * gone. */
bool nopi_read_request(int fd, char **req, uint64_t *len, int *got, int ngot);
/* As nopi_read_request, for a socket on which nothing follows a request before it has been
 * answered (a zygote's child's own): its length and its first bytes come in one system call,
 * where they took two on the way of every request to a reused child.  false too when more
 * than one request came. */
bool nopi_read_request_alone(int fd, char **req, uint64_t *len, int *got, int ngot);

#endif /* NEURONOP_SERVER_H */
