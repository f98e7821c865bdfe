/*
 * outtrack.c - which output elements each core wrote: the racecheck, the check for output
 * no core wrote, and the initcheck (compute-sanitizer's tools, for the op's output).
 *
 * Each core records the ranges of the output it writes, extending its last range when a
 * write continues it, so a kernel that writes its part in chunks costs one range, not a mark
 * per element.  At the end of a run all ranges are sorted once: an overlap between two cores
 * is a race, a gap is output nobody wrote.  A read of the output must be covered by what the
 * reading core wrote itself or what cores that had already finished wrote; anything else
 * depends on the order in which cores run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outtrack.h"

void nopi_out_write(nopi_core *c, int64_t begin, int64_t end)
{
    if (begin >= end)
        return;
    nopi_ranges *r = &c->written;
    if (r->n && r->v[r->n - 1].end >= begin && r->v[r->n - 1].begin <= begin) {
        if (end > r->v[r->n - 1].end)
            r->v[r->n - 1].end = end;
        return;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        nopi_range *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            nopi_core_fail(c, "out of memory tracking the output");
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (nopi_range){ begin, end, (int)c->id };
}

/* True when [begin, end) is inside the union of the ranges in r (unsorted, small: checked
 * by repeatedly extending the covered prefix). */
static bool covers(const nopi_ranges *r, int64_t begin, int64_t end)
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
    return begin >= end;
}

void nopi_out_read(nopi_core *c, int64_t begin, int64_t end, const char *fn)
{
    if (!(c->run->checks & NOP_CHECK_INIT) || begin >= end || covers(&c->written, begin, end))
        return;
    /* cores that have finished are safe to read from */
    nopi_run *run = c->run;
    pthread_mutex_lock(&run->diag_lock);
    bool ok = false;
    for (int64_t at = begin; !ok;) {
        int64_t before = at;
        for (int i = 0; i < run->ncores; i++) {
            nopi_core *o = &run->cores[i];
            if (o == c || !o->finished)
                continue;
            for (size_t k = 0; k < o->written.n; k++)
                if (o->written.v[k].begin <= at && o->written.v[k].end > at)
                    at = o->written.v[k].end;
        }
        for (size_t k = 0; k < c->written.n; k++)
            if (c->written.v[k].begin <= at && c->written.v[k].end > at)
                at = c->written.v[k].end;
        ok = at >= end;
        if (at == before)
            break;
    }
    pthread_mutex_unlock(&run->diag_lock);
    if (!ok)
        nopi_core_fail(c, "%s(offset=%lld, n=%lld): reads output elements no core has written "
                       "yet (initcheck); the output starts undefined on the device", fn,
                       (long long)begin, (long long)(end - begin));
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
