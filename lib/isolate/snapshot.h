/*
 * snapshot.h - a kept worker's way back to its state before its first request (internal to
 * isolate/, the worker's side; snapshot.c).
 *
 * A zygote's child that has loaded its library takes a snapshot of itself, serves a request,
 * and then restores the snapshot instead of ending, so the next request of the same server
 * costs no fork, exit or library load.  What a request can change in the process (the
 * seccomp filter allows nothing else) is put back or checked: every private writable page
 * (compared with the snapshot's copy, snapshot.c says why), mappings it made, the heap's
 * end, signal handlers (of the signals handled then or now: one at its default action both
 * times, or ignored both times, keeps whatever mask and flags the request gave it, which
 * change nothing of how it is delivered), the signal mask and alternate
 * stack, descriptors and their flags, the thread pointer.  What
 * cannot be put back (a thread still running, a signal pending, a mapping it removed or
 * changed, a descriptor it made another file, or the same file in another access mode)
 * ends the process instead: the next request gets a fresh child.
 *
 * Ownership: a snapshot lives in mappings of its own, outside what it restores, and is only
 * ever used by the process that took it (the child); it is never freed (the process ends
 * with it).  Nothing here is process-wide.  Single-threaded use only: take it and restore
 * it with no other thread in the process.
 */
#ifndef NEURONOP_SNAPSHOT_H
#define NEURONOP_SNAPSHOT_H

typedef struct nopi_snap nopi_snap;

/* Makes what a snapshot needs.  NULL when this build cannot restore one (AddressSanitizer's
 * shadow memory is terabytes of writable mappings), or on no memory: the child then serves
 * one request and ends, as without. */
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
