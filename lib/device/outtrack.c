/*
 * outtrack.c - which output elements each core wrote: the racecheck, the check for output
 * no core wrote, and the initcheck (compute-sanitizer's tools, for the op's output).
 *
 * Each core records the ranges of the output it writes, extending its last range when a
 * write continues it, so a kernel that writes its part in chunks costs one range, not a mark
 * per element.  At the end of a run all ranges are sorted once: an overlap between two cores
 * is a race, a gap is output nobody wrote.  A read of the output must be covered by what the
 * reading core wrote itself: cores never synchronise, so what one reads of another's part
 * depends on the order in which they run (when the other has finished, the message names
 * it; in the parallel schedule it may still be running, its ranges being written unlocked).
 *
 * A C++ element is a T & (accessors.c): the runtime sees each reference made, never the read
 * or the write through it.  So that a read of an output element nothing wrote is still
 * found, a single-core float32 output gets a pattern when the first reference into it
 * through a writable accessor is made: each element no core wrote yet is set to a
 * signalling NaN whose payload holds a mark and the element's index.  Float arithmetic on it
 * gives the quiet NaN of the same payload and a copy keeps it, so a value made from a
 * never-written element names the element it was read from, and an element that holds
 * anything but its own pattern was written (through a reference, a pointer made from one, or
 * any other way).  The output starts undefined on the device; the pattern is one of its
 * possible contents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outtrack.h"

/* Adds [begin, end) to r, extending its last range when it continues it; -1 when out of
 * memory. */
static int add_range(nopi_ranges *r, int64_t begin, int64_t end, int core)
{
    if (r->n && r->v[r->n - 1].end >= begin && r->v[r->n - 1].begin <= begin) {
        if (end > r->v[r->n - 1].end)
            r->v[r->n - 1].end = end;
        return 0;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        nopi_range *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (nopi_range){ begin, end, core };
    return 0;
}

void nopi_out_write(nopi_core *c, int64_t begin, int64_t end)
{
    nopi_range *last = c->written.n ? &c->written.v[c->written.n - 1] : NULL;
    if (last && last->end >= begin && last->begin <= begin) {   /* the common case, inline */
        if (end > last->end)
            last->end = end;
        return;
    }
    if (begin < end && add_range(&c->written, begin, end, (int)c->id) != 0)
        nopi_core_fail(c, "out of memory tracking the output");
}

/* ---- the never-written pattern (see the top) -------------------------------------------- */

void nopi_out_pattern(nopi_core *c)
{
    nopi_run *run = c->run;
    nt_tensor *t = run->dst;
    if (c->out_pattern || !t || t->dtype != NT_F32 || run->ncores != 1 ||
        !(run->checks & NOP_CHECK_INIT))
        return;
    /* what was written before stays (marked in a bitmap: this runs on the kernel's small
     * stack, where a sort's buffers do not fit) */
    unsigned char *done = calloc((size_t)(t->numel / 8 + 1), 1);
    if (!done)
        nopi_core_fail(c, "out of memory tracking the output");
    for (size_t k = 0; k < c->written.n; k++)
        for (int64_t i = c->written.v[k].begin; i < c->written.v[k].end; i++)
            done[i / 8] |= (unsigned char)(1u << (i % 8));
    for (int64_t i = 0; i < t->numel; i++) {
        if (done[i / 8] & (1u << (i % 8)))
            continue;
        uint32_t b = nopi_out_pattern_bits(i);
        memcpy(t->data + (size_t)i * 4, &b, 4);
    }
    free(done);
    c->out_pattern = true;
}

int nopi_out_pattern_end(nopi_core *c, char *msg, size_t size)
{
    if (!c->out_pattern)
        return 0;
    const nt_tensor *t = c->run->dst;
    nopi_ranges fresh = { 0 };
    int64_t run_begin = -1;
    int rc = 0;
    for (int64_t i = 0; i <= t->numel && rc == 0; i++) {
        int64_t src = i < t->numel ? nopi_out_pattern_source(c, i) : NOPI_OUT_NEVER_WRITTEN;
        if (src >= 0) {
            snprintf(msg, size, NOPI_OUT_UNINIT_FMT, "nt_get_f32", (long long)src, 1LL);
            rc = -1;
        } else if (src == NOPI_OUT_WRITTEN && run_begin < 0) {
            run_begin = i;
        } else if (src == NOPI_OUT_NEVER_WRITTEN && run_begin >= 0) {
            if (add_range(&fresh, run_begin, i, (int)c->id) != 0) {
                free(fresh.v);   /* out of memory: the ranges recorded stay */
                return 0;
            }
            run_begin = -1;
        }
    }
    if (rc == 0) {
        /* what the elements hold is what was written: a write through a pointer counts, a
         * reference made and never written through does not */
        free(c->written.v);
        c->written = fresh;
    } else {
        free(fresh.v);
    }
    return rc;
}

/* The first element of [begin, end) that r does not cover (end when it covers them all). */
static int64_t first_uncovered(const nopi_ranges *r, int64_t begin, int64_t end)
{
    bool progress = true;
    while (begin < end && progress) {
        progress = false;
        for (size_t i = 0; i < r->n; i++) {
            if (r->v[i].begin <= begin && r->v[i].end > begin) {
                begin = r->v[i].end;
                progress = true;
            }
        }
    }
    return begin < end ? begin : end;
}

/* The finished core other than c that wrote element at, or -1.  Only finished cores: a
 * running one's ranges are its own, written without a lock. */
static int finished_writer(nopi_core *c, int64_t at)
{
    nopi_run *run = c->run;
    int who = -1;
    pthread_mutex_lock(&run->diag_lock);
    for (int i = 0; i < run->ncores && who < 0; i++) {
        nopi_core *o = &run->cores[i];
        if (o == c || !o->finished)
            continue;
        for (size_t k = 0; k < o->written.n && who < 0; k++)
            if (o->written.v[k].begin <= at && o->written.v[k].end > at)
                who = (int)o->id;
    }
    pthread_mutex_unlock(&run->diag_lock);
    return who;
}

void nopi_out_read(nopi_core *c, int64_t begin, int64_t end, const char *fn)
{
    if (!(c->run->checks & NOP_CHECK_INIT) || begin >= end)
        return;
    int64_t at = first_uncovered(&c->written, begin, end);
    if (at == end)
        return;
    /* with the pattern, an element written through a pointer made from a reference counts */
    if (c->out_pattern) {
        bool ok = true;
        for (int64_t i = begin; ok && i < end; i++)
            ok = nopi_out_pattern_source(c, i) != NOPI_OUT_NEVER_WRITTEN;
        if (ok)
            return;
    }
    /* Cores never synchronise: what a core reads of another's part depends on whether that
     * one ran first, so it is an error even when it did (the sequential schedule), and the
     * same error whatever the order: named by the writer when it is known. */
    if (c->run->ncores > 1) {
        int who = finished_writer(c, at);
        if (who >= 0)
            nopi_core_fail(c, NOPI_OUT_OTHER_FMT, fn, (long long)begin, (long long)(end - begin),
                           (long long)at, who);
        nopi_core_fail(c, NOPI_OUT_UNOWNED_FMT, fn, (long long)begin, (long long)(end - begin),
                       (long long)at);
    }
    nopi_core_fail(c, NOPI_OUT_UNINIT_FMT, fn, (long long)begin, (long long)(end - begin));
}

static int by_begin(const void *a, const void *b)
{
    const nopi_range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : x->core - y->core;
}

int nopi_out_finish(nopi_run *run, nop_diag *d)
{
    size_t n = 0;
    for (int i = 0; i < run->ncores; i++)
        n += run->cores[i].written.n;
    nopi_range *all = malloc((n ? n : 1) * sizeof *all);
    if (!all)
        return 0;
    n = 0;
    for (int i = 0; i < run->ncores; i++) {
        if (!run->cores[i].written.n)
            continue;
        memcpy(all + n, run->cores[i].written.v, run->cores[i].written.n * sizeof *all);
        n += run->cores[i].written.n;
    }
    qsort(all, n, sizeof *all, by_begin);
    int64_t numel = run->dst->numel, covered = 0, missing = 0, first_missing = -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const nopi_range *r = &all[i];
        if (r->begin > covered) {
            missing += r->begin - covered;
            if (first_missing < 0)
                first_missing = covered;
        }
        /* an overlap with a range of another core: a race */
        if ((run->checks & NOP_CHECK_RACE) && r->begin < covered) {
            for (size_t j = i; j-- > 0;) {
                if (all[j].end > r->begin && all[j].core != r->core) {
                    int64_t at = r->begin > all[j].begin ? r->begin : all[j].begin;
                    snprintf(d->msg, sizeof d->msg, "output element %lld was written by core "
                             "%d and by core %d (racecheck): cores must write disjoint parts "
                             "of the output; which write wins depends on core order",
                             (long long)at, all[j].core, r->core);
                    rc = -1;
                    break;
                }
            }
        }
        if (r->end > covered)
            covered = r->end;
    }
    if (covered < numel) {
        missing += numel - covered;
        if (first_missing < 0)
            first_missing = covered;
    }
    if (rc == 0 && missing && (run->checks & NOP_CHECK_UNWRITTEN)) {
        snprintf(d->msg, sizeof d->msg, "%lld of %lld output elements were written by no core, "
                 "the first at element %lld: on the device they hold whatever was in memory",
                 (long long)missing, (long long)numel, (long long)first_missing);
        rc = -1;
    }
    free(all);
    return rc;
}
