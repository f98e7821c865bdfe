/*
 * snapshot.c - a kept worker's snapshot of itself, and putting it back (see snapshot.h).
 *
 * Taking one: the bytes of every private writable mapping are copied into a mapping of the
 * snapshot's own; the heap's end, signal handlers, alternate stack, descriptors and the
 * thread pointer are noted, and the registers are saved with getcontext.  Putting it back
 * runs on a stack of its own, outside what it restores: it checks what it cannot undo
 * (another thread, a pending signal, a mapping removed or changed, a descriptor that is
 * another file now or the same file opened another way), moves the heap's end
 * back, unmaps what the request mapped, compares every page of the snapshot's mappings with
 * its copy and copies back those that differ, restores the rest, and jumps back into
 * nopi_snap_take with setcontext.  Pages of zeros are not kept but compared with zeros, and
 * an anonymous page never touched (mincore: not resident, on a machine without swap) is not
 * read at all, neither when the snapshot is taken nor when it is put back: a worker's
 * megabytes of stacks and buffers are mostly untouched, and reading a page faults it in.
 *
 * Why compare rather than have the kernel track writes (userfaultfd's write-protection, or
 * soft-dirty bits): every tracked page costs a fault at its first write in each request, and
 * re-arming the tracking a TLB shootdown; on these VMs, whose page tables are the
 * hypervisor's, both cost more than comparing a few megabytes.  Comparing also needs nothing
 * of the kernel, and cannot be fooled by a mapping replaced with one that looks the same.
 *
 * Nothing here allocates or calls into stdio once a snapshot is taken: the heap and stdio's
 * buffers are among what it restores.  Raw system calls where glibc would keep state of its
 * own (signal handlers: glibc's wrapper refuses its own signals, which are restored too).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

#include "snapshot.h"

#define MAX_REGIONS 2048             /* mappings a worker has: a few hundred */
#define MAPS_BYTES (256 * 1024)      /* /proc/self/maps' text */
#define ALT_STACK (64 * 1024)        /* the restore's own stack */
#define MAX_FDS 64                   /* descriptors a snapshot may have open */
#define NSIG_KERNEL 64
#define TOUCHED_PAGES 4096           /* pages mincore is asked about at once */
#define HEAP_ROOM (8 << 20)          /* the heap's room for a request's allocations */
#define PAGE 4096                    /* what is compared and copied back at once (mappings
                                      * are whole pages, of this size or a multiple) */

/* One line of /proc/self/maps. */
struct region {
    uintptr_t start, end;
    uint64_t offset, inode;
    uint32_t dev_major, dev_minor;
    char perms[4];                   /* "rw-p" */
    bool copied;                     /* private and writable: its bytes are kept */
    bool heap, stack;                /* [heap], [stack] */
    size_t first;                    /* its first page's index in the copy's page slots */
};

/* The kernel's struct sigaction (glibc's differs in layout and refuses its own signals). */
struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

struct nopi_snap {
    volatile int resumed;            /* set by a restore, just before it jumps back */
    ucontext_t ctx;                  /* where nopi_snap_take returned 0 */
    ucontext_t alt;                  /* the restore, on stack[], made once (taking one) */
    ucontext_t back;                 /* where the restore returns when it cannot begin */
    char *copy;                      /* the kept bytes: a mapping of their own, which holds */
    size_t copy_len;
    const uint32_t *slots;           /* for each page of the copied mappings, 0 (all zeros)
                                      * or 1 + where its bytes are in ... */
    const char *pages;               /* ... the pages that are not all zeros */
    uintptr_t brk;
#if defined(__x86_64__)
    unsigned long fsbase;
#endif
    struct ksigaction act[NSIG_KERNEL + 1];
    bool have_act[NSIG_KERNEL + 1];
    uint64_t caught, ignored;        /* signals caught, and ignored, at the snapshot, and ... */
    uint64_t caught_now, ignored_now;   /* ... as a restore finds them (bit sig - 1) */
    stack_t altstack;
    struct { bool open; dev_t dev; ino_t ino; int flags; } fds[MAX_FDS];
    int nfds;                        /* one past the highest descriptor open */
    int nregions, nnow;
    struct region regions[MAX_REGIONS];   /* the snapshot's mappings, in address order */
    struct region now[MAX_REGIONS];       /* the mappings as a restore finds them */
    char maps[MAPS_BYTES];
    unsigned char touched[TOUCHED_PAGES];   /* mincore's answer for the pages of ... */
    uintptr_t touched_lo, touched_hi;       /* ... [lo, hi): one mapping or several in a row */
    bool swap;                       /* the machine swaps: a page not resident may hold data */
    _Alignas(16) char stack[ALT_STACK];
};

static const char zero_page[PAGE];   /* read-only: not among what is restored */

/* Whether the page at `at`, in the snapshot's mapping regions[i], may have been touched.  A
 * page of an anonymous mapping that is not resident was never touched (or was given back),
 * so it reads as zeros, and reading it would only fault it in; but only where there is no
 * swap, which would also leave a written page not resident.  A file's pages (a library's
 * data) are never taken for zeros.  mincore answers for up to TOUCHED_PAGES pages at once,
 * across the anonymous mappings that follow this one without a gap (a core's stack and its
 * guard, for eight cores): one system call where there were a dozen.  Not across a file's
 * mapping (mincore looks each of its pages up in the page cache, which cost a restore more
 * than all its other questions to mincore together), nor past the last mapping of the run
 * whose pages are kept (a stack's gigabyte guard holds none). */
static bool may_be_touched(nopi_snap *s, int i, uintptr_t at)
{
    const struct region *r = &s->regions[i];
    if (r->inode || s->swap)
        return true;
    if (at < s->touched_lo || at >= s->touched_hi) {
        uintptr_t cap = at + (uintptr_t)TOUCHED_PAGES * PAGE;
        uintptr_t hi = r->end, run_end = r->end;   /* hi: the run's last copied mapping */
        for (int j = i + 1; j < s->nregions && s->regions[j].start == run_end &&
                            run_end < cap && !s->regions[j].inode; j++) {
            run_end = s->regions[j].end;
            if (s->regions[j].copied)
                hi = run_end;
        }
        if (hi > cap)
            hi = cap;
        s->touched_lo = s->touched_hi = 0;
        if (mincore((void *)at, hi - at, s->touched) != 0)
            return true;
        s->touched_lo = at;
        s->touched_hi = hi;
    }
    return s->touched[(at - s->touched_lo) / PAGE] & 1;
}

/* Forgets mincore's last answer (pages may have been touched since). */
static void forget_touched(nopi_snap *s)
{
    s->touched_lo = s->touched_hi = 0;
}

/* ---- reading /proc/self/maps ------------------------------------------------------------ */

static uint64_t hex(const char **p)
{
    uint64_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return v;
        v = v * 16 + (uint64_t)d;
    }
}

static uint64_t dec(const char **p)
{
    uint64_t v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++)
        v = v * 10 + (uint64_t)(**p - '0');
    return v;
}

/* Whether got bytes read of a file of one record (/proc/self/status) are all of it: seq_file
 * makes a record whole before it copies any of it, and a read takes all of it that fits.
 * Asking again to see the end would cost a restore a system call.  Were it ever cut short, a
 * field read_status needs would be missing, and the restore would end the process. */
static bool one_record(const char *buf, size_t got)
{
    (void)buf;
    return got > 0;
}

/* Whether the text of /proc/self/maps read so far (got bytes at buf) ends with the line of a
 * mapping above the user's address space: x86-64's [vsyscall], which is always the last
 * (the kernel shows it after every other).  Asking again to see the end would cost a
 * restore a system call; without such a line (other machines, vsyscall=none) it does. */
static bool ends_at_gate(const char *buf, size_t got)
{
    if (got < 2 || buf[got - 1] != '\n')
        return false;
    size_t at = got - 1;
    while (at > 0 && buf[at - 1] != '\n')
        at--;
    const char *p = buf + at;
    return hex(&p) > UINTPTR_MAX / 2 && *p == '-';
}

/* Reads the whole of a /proc file into buf (len bytes of room, terminated); its length, or
 * -1.  open, read and close only: no stdio, no allocation.  whole, when not NULL, says from
 * what has come whether that is all of it, without reading its end. */
static ssize_t read_proc(const char *path, char *buf, size_t len,
                         bool (*whole)(const char *buf, size_t got))
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    for (;;) {
        if (got + 1 >= len) {   /* no room to know it ended */
            close(fd);
            return -1;
        }
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (whole && whole(buf, got))
            break;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

/* Whether [start, end) overlaps the snapshot's own mappings (the struct, the copy). */
static bool own(const nopi_snap *s, uintptr_t start, uintptr_t end)
{
    uintptr_t a = (uintptr_t)s, b = a + sizeof *s;
    uintptr_t c = (uintptr_t)s->copy, d = c + s->copy_len;
    return (start < b && end > a) || (s->copy && start < d && end > c);
}

/* Parses the process's mappings, but the snapshot's own, into out (room for MAX_REGIONS);
 * their number, or -1. */
static int read_maps(nopi_snap *s, struct region *out)
{
    if (read_proc("/proc/self/maps", s->maps, sizeof s->maps, ends_at_gate) < 0)
        return -1;
    int n = 0;
    for (const char *p = s->maps; *p;) {
        struct region r;
        memset(&r, 0, sizeof r);
        r.start = (uintptr_t)hex(&p);
        if (*p++ != '-')
            return -1;
        r.end = (uintptr_t)hex(&p);
        if (*p++ != ' ')
            return -1;
        for (int i = 0; i < 4; i++)
            if (!(r.perms[i] = *p++))
                return -1;
        p++;
        r.offset = hex(&p);
        p++;
        r.dev_major = (uint32_t)hex(&p);
        p++;
        r.dev_minor = (uint32_t)hex(&p);
        p++;
        r.inode = dec(&p);
        while (*p == ' ')
            p++;
        r.heap = strncmp(p, "[heap]", 6) == 0;
        r.stack = strncmp(p, "[stack]", 7) == 0;
        while (*p && *p != '\n')
            p++;
        if (*p)
            p++;
        r.copied = r.perms[1] == 'w' && r.perms[3] == 'p';
        if (own(s, r.start, r.end))
            continue;
        if (n == MAX_REGIONS)
            return -1;
        out[n++] = r;
    }
    return n;
}

static bool same_kind(const struct region *a, const struct region *b)
{
    return memcmp(a->perms, b->perms, sizeof a->perms) == 0 && a->offset == b->offset &&
           a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
}

/* ---- /proc/self/status and signal handlers --------------------------------------------- */

/* The number after field (such as "\nSigCgt:\t") in the text of /proc/self/status, read
 * by next (hex or dec); true when it is there. */
static bool status_field(const char *status, const char *field,
                         uint64_t (*next)(const char **), uint64_t *v)
{
    const char *p = strstr(status, field);
    if (!p)
        return false;
    p += strlen(field);
    *v = next(&p);
    return true;
}

/* What a snapshot and a restore read of /proc/self/status. */
struct status {
    uint64_t threads;
    uint64_t pending;   /* signals pending for the thread or the process */
    uint64_t caught;    /* signals caught (bit sig - 1) */
    uint64_t ignored;   /* signals ignored */
};

/* Reads /proc/self/status into *st (s->maps is its buffer); 0, or -1. */
static int read_status(nopi_snap *s, struct status *st)
{
    uint64_t mine, shared;
    if (read_proc("/proc/self/status", s->maps, sizeof s->maps, one_record) < 0 ||
        !status_field(s->maps, "\nThreads:\t", dec, &st->threads) ||
        !status_field(s->maps, "\nSigPnd:\t", hex, &mine) ||
        !status_field(s->maps, "\nShdPnd:\t", hex, &shared) ||
        !status_field(s->maps, "\nSigCgt:\t", hex, &st->caught) ||
        !status_field(s->maps, "\nSigIgn:\t", hex, &st->ignored))
        return -1;
    st->pending = mine | shared;
    return 0;
}

/* Whether a restore sets sig's action again.  Those caught at the snapshot or now, those
 * ignored then or now but not both times, and SIGCHLD, whose flags act even on the default
 * action (SA_NOCLDWAIT): a signal at its default action then and now is delivered the same
 * whatever its unused mask and flags say, and so is one ignored then and now (discarded
 * whatever they say).  Setting all 64 costs a system call each (on these VMs as much as the
 * rest of the restore's checks); and a worker ignores what its caller ignored (SIGINT and
 * SIGQUIT, under Python): two of the nine it set each time. */
static bool must_restore(const nopi_snap *s, int sig)
{
    uint64_t bit = UINT64_C(1) << (sig - 1);
    uint64_t changed_ignore = s->ignored ^ s->ignored_now;
    return sig == SIGCHLD || ((s->caught | s->caught_now | changed_ignore) & bit);
}

/* ---- taking it ------------------------------------------------------------------------ */

nopi_snap *nopi_snap_open(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return NULL;   /* its shadow memory is terabytes of writable mappings */
#else
    nopi_snap *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    if (s == MAP_FAILED)
        return NULL;
    /* a flag of its own, so that no mapping the process makes next to it merges with it */
    madvise(s, sizeof *s, MADV_DONTDUMP);
    /* /proc/swaps is a header line, then a line for each swap area in use */
    ssize_t n = read_proc("/proc/swaps", s->maps, sizeof s->maps, NULL);
    const char *nl = n > 0 ? strchr(s->maps, '\n') : NULL;
    s->swap = n <= 0 || (nl && nl[1] != '\0');
    return s;
#endif
}

/* The snapshot's own work, below nopi_snap_take's frame: 0, or -1. */
static __attribute__((noinline)) int take_now(nopi_snap *s)
{
    /* the heap's end only ever grows: a restore moves it back down, never up; and threads
     * allocate from it too, rather than from arenas of their own, each a 64 MiB mapping the
     * restore would unmap (a TLB shootdown) */
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_ARENA_MAX, 1);
    /* room on the heap, made now, for what a request allocates (a kept device's inputs,
     * a run's outputs): blocks that came from mmap, or a heap that grew, would be unmapped
     * by the restore, and on these VMs that TLB shootdown across the worker's threads costs
     * hundreds of microseconds a request; room never touched costs nothing to keep */
    mallopt(M_MMAP_THRESHOLD, HEAP_ROOM);
    void *volatile room = malloc(HEAP_ROOM - 4096);   /* volatile: not elided with free */
    free(room);
    if ((s->nregions = read_maps(s, s->regions)) < 0)
        return -1;
    /* most of a worker's writable memory is all zeros (stacks and buffers not yet used):
     * those pages are compared with zeros rather than kept */
    size_t npages = 0, nonzero = 0;
    forget_touched(s);
    for (int i = 0; i < s->nregions; i++) {
        struct region *r = &s->regions[i];
        if (!r->copied)
            continue;
        r->first = npages;
        npages += (r->end - r->start) / PAGE;
        for (uintptr_t at = r->start; at < r->end; at += PAGE)
            nonzero += may_be_touched(s, i, at) &&
                       memcmp((const void *)at, zero_page, PAGE) != 0;
    }
    nonzero += 64;   /* this function's own frames may dirty a few more while it copies */
    size_t head = (npages * sizeof(uint32_t) + PAGE - 1) / PAGE * PAGE;
    size_t len = head + nonzero * PAGE;
    /* populated at once: a page fault for each of its pages would cost more than the copy */
    void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                      MAP_POPULATE, -1, 0);
    if (copy == MAP_FAILED)
        return -1;
    madvise(copy, len, MADV_DONTDUMP);   /* as the struct's: it merges with no neighbour */
    s->copy = copy;
    s->copy_len = len;
    uint32_t *slots = copy;
    char *pages = (char *)copy + head;
    size_t used = 0;
    forget_touched(s);   /* the count above may have touched a page of this stack */
    for (int i = 0; i < s->nregions; i++) {
        const struct region *r = &s->regions[i];
        if (!r->copied)
            continue;
        uint32_t *slot = slots + r->first;
        for (uintptr_t at = r->start; at < r->end; at += PAGE, slot++) {
            if (!may_be_touched(s, i, at) || memcmp((const void *)at, zero_page, PAGE) == 0) {
                *slot = 0;
            } else if (used < nonzero) {
                memcpy(pages + used * PAGE, (const void *)at, PAGE);
                *slot = (uint32_t)++used;
            } else {
                return -1;
            }
        }
    }
    s->slots = slots;
    s->pages = pages;
    mprotect(s->copy, s->copy_len, PROT_READ);   /* what user code would reach needs mprotect */
    s->brk = (uintptr_t)syscall(SYS_brk, 0);
#if defined(__x86_64__)
    if (syscall(SYS_arch_prctl, ARCH_GET_FS, &s->fsbase) != 0)
        return -1;
#endif
    for (int sig = 1; sig <= NSIG_KERNEL; sig++)   /* SIGSYS is the filter's, fixed */
        s->have_act[sig] = sig != SIGKILL && sig != SIGSTOP && sig != SIGSYS &&
                           syscall(SYS_rt_sigaction, sig, NULL, &s->act[sig], 8) == 0;
    struct status now;
    if (read_status(s, &now) != 0)
        return -1;
    s->caught = now.caught;
    s->ignored = now.ignored;
    if (sigaltstack(NULL, &s->altstack) != 0)
        return -1;
    for (int fd = 0; fd < MAX_FDS; fd++) {
        struct stat st;
        int flags = fcntl(fd, F_GETFL);
        s->fds[fd].open = flags >= 0 && fstat(fd, &st) == 0;
        if (s->fds[fd].open) {
            s->fds[fd].dev = st.st_dev;
            s->fds[fd].ino = st.st_ino;
            s->fds[fd].flags = flags;
            s->nfds = fd + 1;
        }
    }
    return 0;
}

static void restore_on_alt(unsigned hi, unsigned lo);

/* Makes the context the restore runs in, once: making it for each restore (getcontext) cost
 * a system call.  It is kept where ctx is, which every restore ends by jumping to: no code
 * that could change one could not change the other.  Every signal is blocked while the
 * restore runs (none is pending when it begins), so that no handler, of the request's or
 * not, runs in the middle of it; putting the snapshot's mask back is its last step.  0, or
 * -1. */
static int make_alt(nopi_snap *s)
{
    if (getcontext(&s->alt) != 0)
        return -1;
    s->alt.uc_stack.ss_sp = s->stack;
    s->alt.uc_stack.ss_size = sizeof s->stack;
    s->alt.uc_link = &s->back;
    sigfillset(&s->alt.uc_sigmask);
    uintptr_t p = (uintptr_t)s;
    makecontext(&s->alt, (void (*)(void))restore_on_alt, 2, (unsigned)(p >> 32),
                (unsigned)(p & 0xffffffffu));
    return 0;
}

int nopi_snap_take(nopi_snap *s)
{
    if (make_alt(s) != 0)
        return -1;
    s->resumed = 0;
    if (getcontext(&s->ctx) != 0)
        return -1;
    if (s->resumed)
        return 1;   /* a restore jumped here: memory is as it was below, registers as here */
    return take_now(s);
}

/* ---- putting it back -------------------------------------------------------------------- */

/* Whether the process has no thread but its own, and no signal pending; it also notes the
 * signals caught and ignored now.  A thread that has just been joined may take a moment to
 * leave the kernel's count. */
static bool alone(nopi_snap *s)
{
    for (int tries = 0; tries < 200; tries++) {
        struct status now;
        if (read_status(s, &now) != 0 || now.pending)
            return false;
        s->caught_now = now.caught;
        s->ignored_now = now.ignored;
        if (now.threads == 1)
            return true;
        struct timespec ts = { 0, 50 * 1000 };
        nanosleep(&ts, NULL);
    }
    return false;
}

/* Matches the mappings now against the snapshot's, unmapping what the request added; false
 * when one of the snapshot's is gone or changed (nothing has been changed but the unmapped:
 * mappings no snapshot memory refers to). */
static bool same_layout(nopi_snap *s)
{
    if ((s->nnow = read_maps(s, s->now)) < 0)
        return false;
    int j = 0;   /* the next snapshot mapping to find */
    for (int i = 0; i < s->nnow; i++) {
        const struct region *c = &s->now[i];
        const struct region *r = j < s->nregions ? &s->regions[j] : NULL;
        if (r && same_kind(c, r) && c->end == r->end &&
            (c->start == r->start || (r->stack && c->start < r->start))) {
            j++;   /* as it was (a stack may have grown down) */
            continue;
        }
        if (r && c->end > r->start)
            return false;   /* it overlaps one of the snapshot's: changed */
        /* wholly before the next snapshot mapping: the request's own */
        if (munmap((void *)c->start, c->end - c->start) != 0)
            return false;
    }
    return j == s->nregions;
}

/* Copies back every page of r that differs from the snapshot's copy.  A page of zeros that
 * has not been touched since is still zeros: it is not read (which would fault it in). */
static void put_back(nopi_snap *s, int i)
{
    const struct region *r = &s->regions[i];
    const uint32_t *slot = s->slots + r->first;
    for (uintptr_t at = r->start; at < r->end; at += PAGE, slot++) {
        if (!*slot && !may_be_touched(s, i, at))
            continue;
        const char *was = *slot ? s->pages + (size_t)(*slot - 1) * PAGE : zero_page;
        if (memcmp((const void *)at, was, PAGE) != 0)
            memcpy((void *)at, was, PAGE);
    }
}

static _Noreturn void die(void)
{
    syscall(SYS_exit_group, 0);
    __builtin_unreachable();
}

/* The restore itself, on the snapshot's own stack (s in two halves: makecontext passes
 * ints).  Returns (to nopi_snap_restore, by uc_link) only before it changed anything. */
static void restore_on_alt(unsigned hi, unsigned lo)
{
    nopi_snap *s = (nopi_snap *)(((uintptr_t)hi << 32) | lo);
    if (!alone(s))
        return;
    /* the heap's end first: what glibc believes of it is in the memory restored below */
    if ((uintptr_t)syscall(SYS_brk, s->brk) != s->brk)
        return;
    if (!same_layout(s))
        die();   /* it may have unmapped what the request mapped */
    forget_touched(s);
    for (int i = 0; i < s->nregions; i++)
        if (s->regions[i].copied)
            put_back(s, i);
    for (int sig = 1; sig <= NSIG_KERNEL; sig++)
        if (s->have_act[sig] && must_restore(s, sig) &&
            syscall(SYS_rt_sigaction, sig, &s->act[sig], NULL, 8) != 0)
            die();
    if (sigaltstack(&s->altstack, NULL) != 0)
        die();
    for (int fd = 0; fd < s->nfds; fd++) {
        struct stat st;
        int flags = fcntl(fd, F_GETFL);
        bool open_now = flags >= 0 && fstat(fd, &st) == 0;
        if (!s->fds[fd].open) {
            if (open_now)
                close(fd);
        } else if (!open_now || st.st_dev != s->fds[fd].dev || st.st_ino != s->fds[fd].ino) {
            die();
        } else if (flags != s->fds[fd].flags &&
                   (fcntl(fd, F_SETFL, s->fds[fd].flags) != 0 ||
                    fcntl(fd, F_GETFL) != s->fds[fd].flags)) {
            /* F_SETFL puts back only O_APPEND, O_NONBLOCK, O_DIRECT and O_NOATIME (O_ASYNC
             * the filter forbids), and ignores the rest: the same file opened again in
             * another way (a standard output closed and /dev/null opened read-only as
             * descriptor 1, O_PATH, O_SYNC) stays so, and the next request's writes to it
             * would fail.  Every flag must be as it was. */
            die();
        }
    }
    syscall(SYS_close_range, (unsigned)s->nfds, ~0u, 0u);   /* all the request opened */
#if defined(__x86_64__)
    if (syscall(SYS_arch_prctl, ARCH_SET_FS, s->fsbase) != 0)
        die();
#endif
    s->resumed = 1;
    setcontext(&s->ctx);   /* the signal mask too, as getcontext saw it */
    die();
}

void nopi_snap_restore(nopi_snap *s)
{
    swapcontext(&s->back, &s->alt);   /* the same context each time: it starts afresh */
}
