/*
 * fiber.h - host threads that run virtual cores (internal; see fiber.c).
 */
#ifndef NEURONOP_FIBER_H
#define NEURONOP_FIBER_H

#include "core.h"

/* Sent by a run's watchdog, or a worker's own timer, to a worker whose kernel is over its
 * time. */
#define NOPI_TIMEOUT_SIGNAL SIGXCPU

struct nopi_worker {
    pthread_t thread;
    ucontext_t sched;               /* the worker's own context, on the thread's stack */
    sigjmp_buf escape;              /* where faults, timeouts and rule breaks land */
    nt__call_fn fn;
    volatile sig_atomic_t in_kernel;
    volatile sig_atomic_t in_service;   /* on its own stack, running a core's service */
    uintptr_t text_lo, text_hi;     /* the op library's code: where a kernel may be stopped */
    _Atomic int64_t deadline_ns;    /* CLOCK_MONOTONIC; 0: none */
    bool has_timer;                 /* timer is the thread's own (nopi_thread_timer_new), and
                                     * fires at deadline_ns: no watchdog need poke it */
    int timer;
    /* how the last core ended, filled by the signal handler */
    nopi_end end;
    int fault_signal;
    uintptr_t fault_addr;
    uintptr_t fault_pc;         /* the faulting instruction, when fault_in_library */
    bool fault_in_library;
    bool fault_int80;           /* at `int 0x80`: a 32-bit system call on a kernel without
                                 * them, which faults rather than reaching seccomp */
    /* the alternate signal stack, and the one it replaced */
    void *altstack;
    stack_t old_altstack;
    /* for AddressSanitizer's fiber annotations */
    void *fake_stack;
    const void *sched_bottom;
    size_t sched_size;
};

/* In a process of its own that user code will run in (a worker process, after it has reset
 * every signal to its default): installs the fault handlers, which send a fault outside any
 * kernel to the default action rather than to a handler the caller had (which would run in a
 * worker whose kernel may have wrecked the heap). */
void nopi_fiber_own_process(void);
/* In a process whose seccomp filter traps an exit made outside libc (seccomp.c): a worker's
 * thread that user code ends (pthread_exit) then makes such a call as it ends, and the trap
 * names it; elsewhere that thread just ends. */
void nopi_fiber_trap_thread_ends(void);
/* Makes the calling thread a worker: installs the handlers once per process and an alternate
 * signal stack for this thread.  text_lo/hi bound the op library's code.  -1 on no memory. */
int nopi_worker_enter(nopi_worker *w, uintptr_t text_lo, uintptr_t text_hi);
void nopi_worker_leave(nopi_worker *w);
/* A timer that sends the calling thread NOPI_TIMEOUT_SIGNAL, made with the raw system call:
 * its kernel id, which a seccomp rule can name (seccomp.c); -1 when none can be made.  A
 * worker given one (has_timer, timer) arms it for each core with a deadline, and then needs
 * no watchdog thread: a kept worker has no thread but its main one between requests. */
int nopi_thread_timer_new(void);
/* Arms timer to fire at deadline_ns (CLOCK_MONOTONIC) and every 5 ms after, as the watchdog
 * would poke, or disarms it (deadline_ns 0). */
void nopi_thread_timer_set(int timer, int64_t deadline_ns);
void nopi_thread_timer_free(int timer);
/* The watchdog's view: the deadline of the core being run (0: none), and the nudge. */
int64_t nopi_worker_deadline(nopi_worker *w);
void nopi_worker_poke(nopi_worker *w);
/* Fills c->end and c->diag from how the worker saw the core end (fiber_end.c). */
void nopi_fiber_describe_end(nopi_core *c, const nopi_worker *w);

#endif /* NEURONOP_FIBER_H */
