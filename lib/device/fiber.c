/*
 * fiber.c - running kernels on their own small stacks, and surviving them.
 *
 * A host thread (a worker) runs each virtual core's kernel on the core's own stack with
 * swapcontext (PTHREAD_STACK_MIN is 16 KB; a GPSIMD stack is 6 KB), and gets control back
 * when the kernel returns, asks for a host service (printf formatting, or a runtime call with
 * deep frames: more stack than a kernel has, which its STACK_SIZE must not pay for), breaks
 * a device rule (nopi_core_fail), crashes or runs out of time.
 *
 * Crashes and timeouts arrive as signals.  The handlers are process-wide by nature, so they
 * are installed once and act only when the signalled thread's worker is inside kernel code;
 * otherwise they chain to the handler that was there before (AddressSanitizer's, or the
 * default, so a bug in neuronop itself still crashes loudly).  They run on a per-thread
 * alternate stack and siglongjmp back to the worker's scheduler, abandoning the kernel's
 * stack.  AddressSanitizer is told about every stack switch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "fiber.h"

#ifndef sigev_notify_thread_id   /* glibc before 2.35 names it only in its union */
#define sigev_notify_thread_id _sigev_un._tid
#endif

#if defined(__SANITIZE_ADDRESS__)
#define NOPI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOPI_ASAN 1
#endif
#endif
#ifdef NOPI_ASAN
#include <sanitizer/common_interface_defs.h>
#define switch_start(fake, bottom, size) __sanitizer_start_switch_fiber(fake, bottom, size)
#define switch_finish(fake, bottom, size) __sanitizer_finish_switch_fiber(fake, bottom, size)
#else
#define switch_start(fake, bottom, size) ((void)(fake), (void)(bottom), (void)(size))
#define switch_finish(fake, bottom, size) ((void)(fake), (void)(bottom), (void)(size))
#endif

/* Address space, not memory, below each stack: a frame that skips past the guard writes into
 * whatever is mapped below and can pass unnoticed (a 1 MB guard let a kernel with
 * `float tmp[290000]` pass its tests half the time), so the guard is larger than any local
 * array a kernel could mean to have.  Reserved with no access, it costs no memory; but it
 * counts against a limit on address space (ulimit -v), so under one it is a 64th of it.
 * Frames larger still are caught by the stack pointer: at a fault (on_signal) and at each
 * call into the runtime (nopi_api_enter). */
#define GUARD_BYTES ((size_t)1 << 30)
#define GUARD_MIN ((size_t)1 << 20)

static size_t guard_bytes(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
        r.rlim_cur / 64 >= GUARD_BYTES)
        return GUARD_BYTES;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), g = (size_t)(r.rlim_cur / 64) / page * page;
    return g > GUARD_MIN ? g : GUARD_MIN;
}
#define ALTSTACK_BYTES (64u << 10)  /* the handler, and AddressSanitizer's, run here */
#define PAINT 0xa5

/* The worker running on this thread, if any.  Thread-local because the kernel API and the
 * signal handlers have no other way to find it; each thread runs one core at a time. */
static _Thread_local nopi_worker *tls_worker;
/* The core it runs; thread-local rather than in the worker: a thread that user code ends
 * (pthread_exit) leaves its worker, on the stack it unwound, to be overwritten, yet is still
 * asked which core made its last call (on_thread_end). */
static _Thread_local nopi_core *tls_core;

/* ---- stacks ----------------------------------------------------------------------------- */

int nopi_stack_alloc(nopi_stack *s, size_t usable)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    usable = (usable + page - 1) / page * page;
    memset(s, 0, sizeof *s);
    s->guard = guard_bytes();
    s->map_size = s->guard + usable;
    void *m = mmap(NULL, s->map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return -1;
    if (mprotect((char *)m + s->guard, usable, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, s->map_size);
        return -1;
    }
    s->map = m;
    s->lo = s->map + s->guard;
    s->hi = s->map + s->map_size;
    return 0;
}

void nopi_stack_free(nopi_stack *s)
{
    if (!s->map)
        return;   /* nothing to write: a forked process copies each page it writes */
    munmap(s->map, s->map_size);
    memset(s, 0, sizeof *s);
}

void nopi_stack_repaint(nopi_stack *s, size_t dirty)
{
    size_t size = (size_t)(s->hi - s->lo);
    if (dirty > size)
        dirty = size;
    memset(s->hi - dirty, PAINT, dirty);
}

size_t nopi_stack_high_water(const nopi_stack *s)
{
    /* word by word from the bottom (the stack is page-aligned), then the exact byte */
    static const uint64_t painted = 0x0101010101010101ull * PAINT;
    const unsigned char *p = s->lo;
    for (; p + 8 <= s->hi; p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (w != painted)
            break;
    }
    while (p < s->hi && *p == PAINT)
        p++;
    return (size_t)(s->hi - p);
}

/* ---- signals ---------------------------------------------------------------------------- */

static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, NOPI_TIMEOUT_SIGNAL };
static struct sigaction previous[NOPI_ARRAY_LEN(fault_signals)];
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;
static pthread_key_t ending_key;   /* set on every worker's thread: on_thread_end */
static bool have_ending_key;
static bool thread_ends_trapped;   /* the process is confined (nopi_fiber_trap_thread_ends) */

static void chain(int sig, siginfo_t *si, void *uc)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(fault_signals); i++) {
        if (fault_signals[i] != sig)
            continue;
        struct sigaction *old = &previous[i];
        if (sig == NOPI_TIMEOUT_SIGNAL)
            return;   /* a late timeout for a kernel that already ended */
        if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
            old->sa_sigaction(sig, si, uc);
        } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
            old->sa_handler(sig);
        } else {
            /* default action: return and let the faulting instruction fault again */
            signal(sig, SIG_DFL);
        }
        return;
    }
}

/* The interrupted program counter and stack pointer, from the signal's context; 0 where
 * they are not known (on_signal then decides without them). */
static void interrupted(void *ucv, uintptr_t *pc, uintptr_t *sp)
{
#if defined(__x86_64__) && defined(REG_RIP) && defined(REG_RSP)
    const greg_t *r = ((ucontext_t *)ucv)->uc_mcontext.gregs;
    *pc = (uintptr_t)r[REG_RIP];
    *sp = (uintptr_t)r[REG_RSP];
#else
    (void)ucv;
    *pc = *sp = 0;
#endif
}

/* Jumps to w's scheduler, abandoning the kernel's stack (or the service's frames: it runs on
 * the scheduler's stack, so there is no switch to tell AddressSanitizer of). */
static _Noreturn void leave_for_scheduler(nopi_worker *w)
{
    if (!w->in_service)
        switch_start(NULL, w->sched_bottom, w->sched_size);
    siglongjmp(w->escape, 1);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    nopi_worker *w = tls_worker;
    if (!w || !w->in_kernel) {
        chain(sig, si, uc);
        return;
    }
    uintptr_t pc, sp;
    interrupted(uc, &pc, &sp);
    bool in_library = pc >= w->text_lo && pc < w->text_hi;
    if (sig == NOPI_TIMEOUT_SIGNAL) {
        /* Stop the kernel only where it is in its own code: a runtime call may hold a lock
         * (malloc's); the watchdog tries again in a few milliseconds. */
        if (!in_library)
            return;
        w->end = NOPI_END_TIMEOUT;
    } else {
        w->end = NOPI_END_CRASH;
        w->fault_signal = sig;
        w->fault_addr = (uintptr_t)si->si_addr;
        w->fault_in_library = in_library;
        w->fault_pc = in_library ? pc : 0;
        /* the instruction's two bytes, read only inside the library's own code */
        w->fault_int80 = sig == SIGSEGV && in_library && pc + 2 <= w->text_hi &&
                         ((const unsigned char *)pc)[0] == 0xcd &&
                         ((const unsigned char *)pc)[1] == 0x80;
        /* a fault in the guard, or in the kernel's own code once its stack pointer has left
         * the stack downwards (a frame larger even than the guard; a runtime call may run on
         * a host stack of its own) */
        nopi_core *c = tls_core;
        if (sig == SIGSEGV && c &&
            ((w->fault_addr >= (uintptr_t)c->stack.map && w->fault_addr < (uintptr_t)c->stack.lo) ||
             (in_library && sp && sp < (uintptr_t)c->stack.lo)))
            w->end = NOPI_END_STACK;
    }
    leave_for_scheduler(w);
}

/* A worker's thread ends while it is still a worker: user code ended it (pthread_exit, from
 * a kernel, shape function or reference that never returned; the runtime leaves before any
 * of its threads ends), and its core would never finish.  In a confined worker, makes the
 * thread's exit call from here, through syscall(), which the filter traps like any exit made
 * by user code ("must return, not exit", seccomp.c).  Unconfined, nothing: a raw exit here
 * would skip the rest of glibc's thread end (the last thread's exit of the process). */
static void on_thread_end(void *w)
{
    (void)w;
    if (tls_worker && thread_ends_trapped)
        syscall(SYS_exit, 0);
}

void nopi_fiber_trap_thread_ends(void)
{
    thread_ends_trapped = true;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    /* SA_NODEFER: the signal stays unblocked while the handler runs, so jumping out of it
     * needs no mask restored, and sigsetjmp need not save one (a system call per core). */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NOPI_ARRAY_LEN(fault_signals); i++)
        sigaction(fault_signals[i], &sa, &previous[i]);
    if (!have_ending_key)   /* (nopi_fiber_own_process installs the handlers again) */
        have_ending_key = pthread_key_create(&ending_key, on_thread_end) == 0;
}

void nopi_fiber_own_process(void)
{
    pthread_once(&handlers_once, install_handlers);
    install_handlers();   /* again: the caller reset every handler to the default */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(fault_signals); i++)
        previous[i] = dfl;   /* a fault outside a kernel: the default action, nobody's else */
}

/* ---- workers ---------------------------------------------------------------------------- */

int nopi_worker_enter(nopi_worker *w, uintptr_t text_lo, uintptr_t text_hi)
{
    memset(w, 0, sizeof *w);
    pthread_once(&handlers_once, install_handlers);
    w->thread = pthread_self();
    w->text_lo = text_lo;
    w->text_hi = text_hi;
    w->altstack = malloc(ALTSTACK_BYTES);
    if (!w->altstack)
        return -1;
    stack_t ss = { .ss_sp = w->altstack, .ss_size = ALTSTACK_BYTES, .ss_flags = 0 };
    if (sigaltstack(&ss, &w->old_altstack) != 0) {
        free(w->altstack);
        return -1;
    }
    tls_worker = w;
    if (have_ending_key)
        pthread_setspecific(ending_key, w);
    return 0;
}

void nopi_worker_leave(nopi_worker *w)
{
    /* restore the previous alternate stack (or none) before freeing ours */
    if (w->old_altstack.ss_flags & SS_DISABLE) {
        stack_t off = { .ss_flags = SS_DISABLE };
        sigaltstack(&off, NULL);
    } else {
        sigaltstack(&w->old_altstack, NULL);
    }
    free(w->altstack);
    tls_worker = NULL;
    tls_core = NULL;
    if (have_ending_key)
        pthread_setspecific(ending_key, NULL);
}

nopi_core *nopi_current(void)
{
    return tls_core;
}

static void fiber_main(void)
{
    nopi_worker *w = tls_worker;
    switch_finish(NULL, &w->sched_bottom, &w->sched_size);
    nopi_core *c = tls_core;
    c->returned = (nt_tensor *)w->fn(c->run->args);
    c->service = NULL;
    switch_start(NULL, w->sched_bottom, w->sched_size);   /* this fiber is done */
    setcontext(&w->sched);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void nopi_run_core(nopi_core *c, nt__call_fn fn)
{
    nopi_worker *w = tls_worker;
    tls_core = c;
    w->fn = fn;
    w->end = NOPI_END_OK;
    if (!c->fiber_ready)   /* the caller may hand over a context made by getcontext */
        getcontext(&c->fiber);
    c->fiber.uc_stack.ss_sp = c->stack.lo;
    c->fiber.uc_stack.ss_size = (size_t)(c->stack.hi - c->stack.lo);
    c->fiber.uc_link = NULL;
    makecontext(&c->fiber, fiber_main, 0);
    size_t size = (size_t)(c->stack.hi - c->stack.lo);
    int64_t t0 = now_ns();
    c->started = nopi_now();
    volatile double cpu0 = c->run->profiled ? nopi_thread_cpu_now() : 0;   /* past siglongjmp */
    bool timed = c->run->timeout > 0;
    if (timed) {
        int64_t deadline = t0 + (int64_t)(c->run->timeout * 1e9);
        atomic_store(&w->deadline_ns, deadline);
        if (w->has_timer)
            nopi_thread_timer_set(w->timer, deadline);
    }
    if (sigsetjmp(w->escape, 0) == 0) {
        for (;;) {
            w->in_kernel = 1;
            switch_start(&w->fake_stack, c->stack.lo, size);
            swapcontext(&w->sched, &c->fiber);
            switch_finish(w->fake_stack, NULL, NULL);
            w->in_kernel = 0;
            if (!c->service)
                break;
            w->in_kernel = c->service_is_call;   /* its faults are the kernel's */
            w->in_service = 1;
            c->service(c, c->service_arg);
            w->in_service = 0;
            w->in_kernel = 0;
            c->service = NULL;
            c->service_is_call = false;
        }
    } else {
        /* a fault, a timeout or nopi_core_fail: the kernel's stack is abandoned (from a
         * service, which runs on this stack, no switch was begun) */
        if (!w->in_service)
            switch_finish(w->fake_stack, NULL, NULL);
        w->in_service = 0;
        w->in_kernel = 0;
        c->service = NULL;
        c->service_is_call = false;
    }
    if (timed && w->has_timer)
        nopi_thread_timer_set(w->timer, 0);
    atomic_store(&w->deadline_ns, 0);
    c->seconds = (double)(now_ns() - t0) * 1e-9;
    c->cpu_seconds = c->run->profiled ? nopi_thread_cpu_now() - cpu0 : c->seconds;
    if (!c->shape_mode && !c->host_stack)
        c->stack_high_water = nopi_stack_high_water(&c->stack);
    if (w->end != NOPI_END_OK && c->end == NOPI_END_OK)
        nopi_fiber_describe_end(c, w);
    tls_core = NULL;
}

void nopi_on_host_stack(nopi_core *c, void (*fn)(nopi_core *, void *), void *arg)
{
    nopi_worker *w = tls_worker;
    void *fake = NULL;
    if (c->service) {   /* a service's own call: on the host stack already */
        fn(c, arg);
        return;
    }
    c->service = fn;
    c->service_arg = arg;
    switch_start(&fake, w->sched_bottom, w->sched_size);
    swapcontext(&c->fiber, &w->sched);
    switch_finish(fake, NULL, NULL);
}

/* call_on_stack(top, fn, c, arg): calls fn(c, arg) with the stack pointer at top (16-byte
 * aligned), and returns with it where it was.  A plain function, so the compiler saves what
 * a call may change; without the swapcontext of nopi_on_host_stack, whose two signal-mask
 * system calls made a small tensor-library call seven times slower.  Where there is none
 * (another architecture, or AddressSanitizer, which must be told of every switch), the
 * runtime call is a service. */
#if !defined(NOPI_ASAN) && (defined(__x86_64__) || defined(__aarch64__))
#define HAVE_CALL_ON_STACK 1
void nopi_call_on_stack(void *top, void (*fn)(nopi_core *, void *), nopi_core *c, void *arg);
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl nopi_call_on_stack\n"
        ".hidden nopi_call_on_stack\n"
        ".type nopi_call_on_stack, @function\n"
        "nopi_call_on_stack:\n"
        "    endbr64\n"
        "    push %rbp\n"
        "    mov %rsp, %rbp\n"
        "    mov %rdi, %rsp\n"         /* top */
        "    mov %rsi, %rax\n"         /* fn */
        "    mov %rdx, %rdi\n"         /* c */
        "    mov %rcx, %rsi\n"         /* arg */
        "    call *%rax\n"
        "    mov %rbp, %rsp\n"
        "    pop %rbp\n"
        "    ret\n"
        ".size nopi_call_on_stack, .-nopi_call_on_stack\n");
#else
__asm__(".text\n"
        ".globl nopi_call_on_stack\n"
        ".hidden nopi_call_on_stack\n"
        ".type nopi_call_on_stack, %function\n"
        "nopi_call_on_stack:\n"
        "    stp x29, x30, [sp, #-16]!\n"
        "    mov x29, sp\n"
        "    mov sp, x0\n"
        "    mov x16, x1\n"
        "    mov x0, x2\n"
        "    mov x1, x3\n"
        "    blr x16\n"
        "    mov sp, x29\n"
        "    ldp x29, x30, [sp], #16\n"
        "    ret\n"
        ".size nopi_call_on_stack, .-nopi_call_on_stack\n");
#endif

/* Where the call goes on the scheduler's stack: below the point it was left at when it
 * switched to this core (nothing runs there until the core comes back), past its red zone. */
static void *sched_free_top(const nopi_worker *w)
{
#if defined(__x86_64__)
    uintptr_t sp = (uintptr_t)w->sched.uc_mcontext.gregs[REG_RSP];
#else
    uintptr_t sp = (uintptr_t)w->sched.uc_mcontext.sp;
#endif
    return (void *)((sp - 256) & ~(uintptr_t)15);
}
#endif

void nopi_runtime_call(nopi_core *c, void (*fn)(nopi_core *, void *), void *arg)
{
    nopi_worker *w = tls_worker;
    if (c->shape_mode || c->host_stack || c->service || !w) {
        fn(c, arg);
        return;
    }
#ifdef HAVE_CALL_ON_STACK
    /* as a service: calls it makes run where they are, and a failure's jump is from the
     * scheduler's stack (leave_for_scheduler) */
    c->service = fn;
    w->in_service = 1;
    nopi_call_on_stack(sched_free_top(w), fn, c, arg);
    w->in_service = 0;
    c->service = NULL;
#else
    c->service_is_call = true;
    nopi_on_host_stack(c, fn, arg);
#endif
}

void nopi_core_fail_diag(nopi_core *c)
{
    nopi_worker *w = tls_worker;
    c->end = NOPI_END_ERROR;
    c->diag.severity = NOP_SEV_ERROR;
    w->end = NOPI_END_ERROR;
    leave_for_scheduler(w);
}

void nopi_core_fail_stack(nopi_core *c)
{
    nopi_worker *w = tls_worker;
    nopi_stack_overflow(c, 0);
    w->end = NOPI_END_STACK;
    leave_for_scheduler(w);
}

typedef struct fail_text {
    const char *fmt;
    va_list *ap;
} fail_text;

static void format_fail(nopi_core *c, void *arg)
{
    const fail_text *f = arg;
    vsnprintf(c->diag.msg, sizeof c->diag.msg, f->fmt, *f->ap);
}

void nopi_core_fail(nopi_core *c, const char *fmt, ...)
{
    /* formatted on the host stack, as printf is: vsnprintf takes 1 to 2 KB, which the
     * stack's high-water mark then showed, past STACK_SIZE, for every failed run (a new
     * user's find) */
    nopi_worker *w = tls_worker;
    va_list ap;
    va_start(ap, fmt);
    fail_text f = { fmt, &ap };
    if (w && w->in_kernel && !w->in_service && !c->shape_mode && !c->host_stack)
        nopi_on_host_stack(c, format_fail, &f);
    else
        format_fail(c, &f);
    va_end(ap);
    nopi_core_fail_diag(c);
}

int nopi_thread_timer_new(void)
{
    /* the raw call: glibc's timer_t is its own handle, not the kernel's id */
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = NOPI_TIMEOUT_SIGNAL;
    ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    int id;
    return syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) == 0 ? id : -1;
}

void nopi_thread_timer_set(int timer, int64_t deadline_ns)
{
    struct itimerspec it;
    memset(&it, 0, sizeof it);
    if (deadline_ns) {
        it.it_value.tv_sec = (time_t)(deadline_ns / 1000000000);
        it.it_value.tv_nsec = (long)(deadline_ns % 1000000000);
        it.it_interval.tv_nsec = 5 * 1000 * 1000;   /* as the watchdog tries again */
    }
    syscall(SYS_timer_settime, timer, deadline_ns ? TIMER_ABSTIME : 0, &it, NULL);
}

void nopi_thread_timer_free(int timer)
{
    syscall(SYS_timer_delete, timer);
}

int64_t nopi_worker_deadline(nopi_worker *w)
{
    return atomic_load(&w->deadline_ns);
}

void nopi_worker_poke(nopi_worker *w)
{
    pthread_kill(w->thread, NOPI_TIMEOUT_SIGNAL);
}

/* What user code c runs, as its messages name it. */
static const char *runs(const nopi_core *c)
{
    return nopi_role_name(nopi_core_role(c));
}

/* Adds a line to c's detail, after what it holds. */
static void detail_append(nopi_core *c, const char *text)
{
    size_t used = strlen(c->diag.detail);
    snprintf(c->diag.detail + used, sizeof c->diag.detail - used, "%s%s", used ? "\n" : "",
             text);
}

/* The hint under a segmentation fault at addr: a NULL from tcm_malloc that the kernel used
 * (a fault in the first pages after a failed tcm_malloc), or a pointer past a buffer. */
static void describe_bad_pointer(nopi_core *c, uintptr_t addr)
{
    if (nopi_core_role(c) != NOPI_ROLE_KERNEL) {   /* host code: no TCM, nor memcheck's lines */
        char text[200];
        snprintf(text, sizeof text, "a pointer the %s used points outside its memory: an "
                 "index past the end of an array, or a pointer never set?", runs(c));
        detail_append(c, text);
        return;
    }
    if (addr < 65536 && c->tcm_null) {
        char at[300] = "", text[600];
        nopi_where wh;
        const nop_library *lib = c->run->lib;
        if (lib->lines && nopi_lines_find(lib->lines, (uintptr_t)c->tcm_null_site - 1, &wh))
            snprintf(at, sizeof at, " at %s:%d", wh.file, wh.line);
        snprintf(text, sizeof text, "tcm_malloc(%zu)%s returned NULL (the pool could not "
                 "serve it: see the warning above) and the kernel used the NULL pointer: "
                 "check what tcm_malloc returns, or ask for less", c->tcm_null, at);
        detail_append(c, text);
    } else if (addr < 4096) {
        detail_append(c, c->run->memcheck ? "the kernel used a NULL pointer, or a field or "
                                            "element just past one: a pointer never set?"
                                          : "the kernel used a NULL pointer, or a field or "
                                            "element just past one: a pointer never set?  "
                                            "--memcheck finds the line");
    } else if (c->run->memcheck) {   /* it checked every pointer it could follow */
        detail_append(c, "a pointer the kernel used points outside its memory, made in a way "
                         "memcheck does not follow: from an integer?");
    } else {
        detail_append(c, "a pointer the kernel used points outside its memory: an index past "
                         "the end of a TCM buffer or a local array?  --memcheck finds the "
                         "line");
    }
}

/* Under memcheck, where in the kernel's source the crash was: " at FILE:LINE in 'FUNC'"
 * after the message, and the line itself first in its detail. */
static void locate_crash(nopi_core *c, uintptr_t pc)
{
    const nop_library *lib = c->run->lib;
    nopi_where wh;
    if (!pc || !lib->lines || !nopi_lines_find(lib->lines, pc, &wh) || !wh.file)
        return;
    size_t used = strlen(c->diag.msg);
    snprintf(c->diag.msg + used, sizeof c->diag.msg - used, " at %s:%d%s%s%s", wh.file,
             wh.line, wh.func ? " in '" : "", wh.func ? wh.func : "", wh.func ? "'" : "");
    char text[512], *path = nopi_path_join(wh.dir ? wh.dir : ".", wh.file);
    if (path && wh.line > 0 && nopi_read_line(path, wh.line, text, sizeof text) == 0)
        snprintf(c->diag.detail, sizeof c->diag.detail, "%5d | %s", wh.line, text);
    free(path);
}

void nopi_stack_overflow(nopi_core *c, size_t used)
{
    c->end = NOPI_END_STACK;
    c->fault = NOP_FAULT_STACK;
    c->diag.severity = NOP_SEV_ERROR;
    if (nopi_core_role(c) != NOPI_ROLE_KERNEL) {   /* host code, on a stack of the host's */
        snprintf(c->diag.msg, sizeof c->diag.msg, "stack overflow: the %s needs more than its "
                 "%zu-byte host stack", runs(c), (size_t)(c->stack.hi - c->stack.lo));
        snprintf(c->diag.detail, sizeof c->diag.detail, "shape and reference functions run "
                 "on a host stack of that size, whatever the kernels' STACK_SIZE: put large "
                 "arrays on the heap (malloc), or recurse less deeply");
        return;
    }
    int n = snprintf(c->diag.msg, sizeof c->diag.msg, "stack overflow: the kernel needs more "
                     "than its STACK_SIZE of %zu bytes", c->run->stack_size);
    /* the figure counts the runtime's calls, which have room of their own (a new user read
     * "used 1160" of a STACK_SIZE of 1000 that passed as a contradiction) */
    if (used && n > 0 && (size_t)n < sizeof c->diag.msg)
        snprintf(c->diag.msg + n, sizeof c->diag.msg - (size_t)n, " (it used %zu, with the "
                 "runtime's calls below it, which have %zu bytes more)", used,
                 nop_stack_runtime_bytes());
    snprintf(c->diag.detail, sizeof c->diag.detail, "declare a larger stack, at most %d bytes, "
             "with 'stack_size: N' in the manifest or -DSTACK_SIZE=N in extra_cflags, or move "
             "large local arrays into TCM (tcm_malloc)", NOP_STACK_MAX_BYTES);
}

void nopi_fiber_describe_end(nopi_core *c, const nopi_worker *w)
{
    c->end = w->end;
    c->diag.severity = NOP_SEV_ERROR;
    switch (w->end) {
    case NOPI_END_STACK:
        nopi_stack_overflow(c, 0);
        break;
    case NOPI_END_TIMEOUT:
        c->fault = NOP_FAULT_TIMEOUT;
        snprintf(c->diag.msg, sizeof c->diag.msg, "timeout: the %s ran for more than %g s and "
                 "was stopped", runs(c), c->run->timeout);
        snprintf(c->diag.detail, sizeof c->diag.detail, "look for a loop that never ends, or "
                 "give it more time with --timeout SECONDS");
        break;
    default: {
        if (w->fault_int80) {   /* as seccomp reports it where the kernel has 32-bit calls */
            c->fault = NOP_FAULT_SYSCALL;
            snprintf(c->diag.msg, sizeof c->diag.msg, "%s made a system call the device does "
                     "not have: int 0x80 (a 32-bit system call)", runs(c));
            snprintf(c->diag.detail, sizeof c->diag.detail, "device code has no processes, "
                     "files, network or signals; neuronop stopped it there");
            break;
        }
        const char *what = w->fault_signal == SIGSEGV ? "segmentation fault"
                           : w->fault_signal == SIGBUS ? "bus error"
                           : w->fault_signal == SIGFPE ? "arithmetic exception (division by "
                                                         "zero?)"
                           : w->fault_signal == SIGILL ? "illegal instruction"
                                                       : "crash";
        c->fault = NOP_FAULT_CRASH;
        bool kernel = nopi_core_role(c) == NOPI_ROLE_KERNEL;
        const char *in = !w->fault_in_library ? "in a runtime call it made"
                         : kernel ? "in kernel code" : "in its own code";
        snprintf(c->diag.msg, sizeof c->diag.msg, "%s crashed: %s %s, address 0x%lx", runs(c),
                 what, in, (unsigned long)w->fault_addr);
        c->diag.detail[0] = '\0';
        locate_crash(c, w->fault_pc);
        if (w->fault_signal == SIGSEGV)
            describe_bad_pointer(c, w->fault_addr);
        break;
    }
    }
}
