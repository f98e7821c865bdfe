/*
 * snapshot.h - a kept worker's way back to its state before its first request (internal to
 * isolate/, the worker's side; snapshot.c).
 *
 * A zygote's child that has loaded its library takes a snapshot of itself, serves a request,
 * and then restores the snapshot instead of ending, so the next request of the same server
 * costs no fork, exit or library load.  What a request can change in the process (the
 * seccomp filter allows nothing else) is put back or checked: every private writable page
 * it wrote (the kernel's write tracking, userfaultfd's asynchronous write-protection read
 * with PAGEMAP_SCAN, finds them), mappings it made, the heap's end, signal handlers, the
 * signal mask and alternate stack, descriptors and their flags, the thread pointer.  What
 * cannot be put back (a thread still running, a signal pending, a mapping it removed or
 * changed) ends the process instead: the next request gets a fresh child.
 *
 * Ownership: a snapshot lives in mappings of its own, outside what it restores, and is only
 * ever used by the process that took it (the child); it is never freed (the process ends
 * with it).  Nothing here is process-wide.  Single-threaded use only: take it and restore
 * it with no other thread in the process.
 */
#ifndef NEURONOP_SNAPSHOT_H
#define NEURONOP_SNAPSHOT_H

#include <stdint.h>
#include <sys/ioctl.h>

/* The kernel's ABI for what a restore asks it, which older headers lack: PAGEMAP_SCAN on
 * /proc/self/pagemap (Linux 6.7) and userfaultfd's asynchronous write-protection (6.7). */
struct nopi_page_region {
    uint64_t start, end, categories;
};
struct nopi_pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define NOPI_PAGEMAP_SCAN _IOWR('f', 16, struct nopi_pm_scan_arg)
#define NOPI_PM_SCAN_WP_MATCHING (1u << 0)
#define NOPI_PM_SCAN_CHECK_WPASYNC (1u << 1)
#define NOPI_PAGE_IS_WRITTEN (1u << 1)
#define NOPI_UFFD_WP_UNPOPULATED (1u << 13)
#define NOPI_UFFD_WP_ASYNC (1u << 15)

typedef struct nopi_snap nopi_snap;

/* Before the seccomp filter (it makes a userfaultfd and opens /proc/self/pagemap, which the
 * filter forbids): makes what a snapshot needs.  NULL when this kernel or build cannot
 * restore one (no asynchronous write-protection, or AddressSanitizer's shadow memory): the
 * child then serves one request and ends, as without. */
nopi_snap *nopi_snap_open(void);
/* Takes the snapshot of the process as it is now.  Returns 0 once taken, 1 each time a
 * restore comes back here (the process is then as it was at the first return), or -1 when
 * it cannot be taken (then serve once and end). */
int nopi_snap_take(nopi_snap *s);
/* Puts the process back as it was when nopi_snap_take returned 0, continuing there with
 * it returning 1.  Returns only when it cannot (nothing changed yet: end the process); a
 * failure once it has begun changing memory ends the process itself. */
void nopi_snap_restore(nopi_snap *s);

#endif /* NEURONOP_SNAPSHOT_H */
