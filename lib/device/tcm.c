/*
 * tcm.c - each core's TCM pool: a first-fit allocator over profile->tcm_bytes.
 *
 * The block table lives outside the pool, so a kernel that writes past a buffer cannot
 * corrupt the allocator; every copy into or out of TCM is checked against the table
 * (accessors.c), which is how an overrun becomes a message instead of a wrong answer.
 *
 * A plain store through a pointer is not a call, and only memcheck sees it where it is
 * made.  So every byte of the pool outside what live blocks asked for keeps the fill
 * pattern: a changed one shows that a store went past a buffer (or into a freed one).
 * tcm_free looks just past its block, and the end of a kernel at the pool up to a little
 * past the furthest block the run allocated (c->tcm_reach: a wild store further on goes
 * unseen, as it would be on the device).  Each run fills the part it reaches as it first
 * reaches it, and a freed block again.  The pattern, 0x7fa5 in every 16 bits, is a NaN in
 * every float dtype, so a kernel that reads TCM it never wrote computes NaNs that show in
 * its output; and as a float32 or bfloat16 a signalling one, which arithmetic makes quiet,
 * other bytes: even buf[n] = 2 * buf[n] + 1 past a buffer's end is seen (a quiet NaN, such
 * as bytes of 0xff, would come back unchanged).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"

#define ALIGN 16
/* how far past a block tcm_free looks for a store past its end, and the end of a kernel past
 * the furthest block: an index a few elements past, without scanning 16 KB a free */
#define OVERRUN_LOOK 64

/* The fill pattern, by a byte's offset in the pool modulo 2 (0x7fa5, little-endian). */
static const unsigned char fill[2] = { 0xa5, 0x7f };

/* The pattern 8 bytes at a time, from an offset that is a multiple of 8: what a run reaches
 * is filled and compared every run, a word at a time rather than a byte. */
static const uint64_t fill8 = 0x7fa57fa57fa57fa5ull;

static void fill_range(unsigned char *tcm, size_t from, size_t to)
{
    size_t i = from;
    for (; i < to && (i & 7); i++)
        tcm[i] = fill[i & 1];
    for (; i + 8 <= to; i += 8)
        memcpy(tcm + i, &fill8, 8);
    for (; i < to; i++)
        tcm[i] = fill[i & 1];
}

/* (the guard's length is even: the pattern keeps its phase across the pool's start) */
_Static_assert(NOPI_TCM_GUARD % 8 == 0, "the guards are whole words of the pattern");

unsigned char *nopi_tcm_new_pool(size_t n)
{
    unsigned char *m = malloc(n + 2 * NOPI_TCM_GUARD);
    return m ? m + NOPI_TCM_GUARD : NULL;
}

void nopi_tcm_free_pool(unsigned char *tcm)
{
    if (tcm)
        free(tcm - NOPI_TCM_GUARD);
}

void nopi_tcm_fill(unsigned char *tcm, size_t n)
{
    fill_range(tcm - NOPI_TCM_GUARD, 0, n + 2 * NOPI_TCM_GUARD);
}

void nopi_tcm_fill_guards(nopi_core *c)
{
    size_t pool = (size_t)c->run->profile->tcm_bytes;
    fill_range(c->tcm - NOPI_TCM_GUARD, 0, NOPI_TCM_GUARD);
    fill_range(c->tcm, pool, pool + NOPI_TCM_GUARD);
}

/* First fit for `size` bytes that keeps `gap` free bytes after the block before it: sets
 * *index (where the block goes in the sorted table) and *at; false when nothing fits. */
static bool first_fit(const nopi_core *c, size_t size, size_t gap, int *index, size_t *at)
{
    size_t pool = (size_t)c->run->profile->tcm_bytes;
    size_t start = 0;
    for (int i = 0; i <= c->nblocks; i++) {
        size_t end = i < c->nblocks ? c->blocks[i].offset : pool;
        if (end >= start && end - start >= size) {
            *index = i;
            *at = start;
            return true;
        }
        if (i < c->nblocks)
            start = c->blocks[i].offset + c->blocks[i].size + gap;
    }
    return false;
}

void *nopi_tcm_alloc(nopi_core *c, size_t nbytes, int stream, const void *site)
{
    size_t pool = (size_t)c->run->profile->tcm_bytes;
    if (nbytes == 0 || nbytes > pool || c->nblocks == NOPI_MAX_TCM_BLOCKS)
        return NULL;
    size_t size = (nbytes + ALIGN - 1) / ALIGN * ALIGN;
    /* memcheck: a gap between blocks where there is room, so a pointer just past one
     * block does not point into the next (the access through it is reported, not taken for
     * the neighbour's); a pool too full for gaps packs blocks as without memcheck */
    int i;
    size_t at;
    if (!(c->run->memcheck && first_fit(c, size, ALIGN, &i, &at)) &&
        !first_fit(c, size, 0, &i, &at))
        return NULL;
    memmove(&c->blocks[i + 1], &c->blocks[i], (size_t)(c->nblocks - i) * sizeof c->blocks[0]);
    c->blocks[i] = (nopi_tcm_block){ (uint32_t)at, (uint32_t)size, (uint32_t)nbytes, stream,
                                     site };
    /* the part of the pool this run reaches for the first time is filled now: what an
     * earlier run's kernel left there (a store past everything it checked) is not this
     * one's to answer for */
    size_t reach = at + size + OVERRUN_LOOK < pool ? at + size + OVERRUN_LOOK : pool;
    if (reach > c->tcm_reach) {
        fill_range(c->tcm, c->tcm_reach, reach);
        c->tcm_reach = reach;
    }
    c->nblocks++;
    c->tcm_used += (int64_t)size;
    if (c->tcm_used > c->n.tcm_peak)
        c->n.tcm_peak = c->tcm_used;
    return c->tcm + at;
}

size_t nopi_tcm_largest_free(const nopi_core *c)
{
    size_t pool = (size_t)c->run->profile->tcm_bytes, start = 0, best = 0;
    for (int i = 0; i <= c->nblocks; i++) {
        size_t end = i < c->nblocks ? c->blocks[i].offset : pool;
        if (end > start && end - start > best)
            best = end - start;
        if (i < c->nblocks)
            start = c->blocks[i].offset + c->blocks[i].size;
    }
    return best;
}

int nopi_tcm_find(nopi_core *c, const void *p, size_t n)
{
    const unsigned char *q = p;
    if (q < c->tcm || q >= c->tcm + c->run->profile->tcm_bytes)
        return -1;
    size_t off = (size_t)(q - c->tcm);
    for (int i = 0; i < c->nblocks; i++) {
        const nopi_tcm_block *b = &c->blocks[i];
        if (off >= b->offset && off < (size_t)b->offset + b->req)
            return n <= (size_t)b->offset + b->req - off ? i : -1;
    }
    return -1;
}

/* The first byte of [from, to) of c's pool (the guard after it included) that is not the
 * fill pattern's, or -1. */
static long changed(const nopi_core *c, size_t from, size_t to)
{
    size_t i = from;
    for (; i < to && (i & 7); i++)
        if (c->tcm[i] != fill[i & 1])
            return (long)i;
    for (; i + 8 <= to; i += 8) {
        uint64_t w;
        memcpy(&w, c->tcm + i, 8);
        if (w != fill8)
            break;   /* the bytes below say which */
    }
    for (; i < to; i++)
        if (c->tcm[i] != fill[i & 1])
            return (long)i;
    return -1;
}

long nopi_tcm_changed_upto(const nopi_core *c, long at)
{
    /* (not past the guard after the pool: a profile's pool need not be whole words, a
     * reviewer's find under AddressSanitizer) */
    long last = at, end = (long)c->run->profile->tcm_bytes + NOPI_TCM_GUARD - 1;
    for (long i = at + 1; i <= (at | 3) && i <= end; i++)
        if (c->tcm[i] != fill[i & 1])
            last = i;
    return last;
}

void nopi_tcm_bytes_str(long first, long last, char *buf, size_t size)
{
    if (first == last)
        snprintf(buf, size, "byte %ld", first);
    else
        snprintf(buf, size, "bytes %ld..%ld", first, last);
}

/* Where the free space after live block i ends: the next block, or the end of the guard
 * after the pool. */
static size_t free_after(const nopi_core *c, int i)
{
    return i + 1 < c->nblocks ? c->blocks[i + 1].offset
                              : (size_t)c->run->profile->tcm_bytes + NOPI_TCM_GUARD;
}

long nopi_tcm_overrun(const nopi_core *c, int block)
{
    const nopi_tcm_block *b = &c->blocks[block];
    size_t end = free_after(c, block), near = (size_t)b->offset + b->size + OVERRUN_LOOK;
    long at = changed(c, (size_t)b->offset + b->req, end < near ? end : near);
    return at < 0 ? -1 : at - (long)b->offset;
}

bool nopi_tcm_stray(const nopi_core *c, long *at, int *block)
{
    size_t pool = (size_t)c->run->profile->tcm_bytes, start = 0;
    *block = -1;
    for (long g = -NOPI_TCM_GUARD; g < 0; g++)   /* the guard before the pool */
        if (c->tcm[g] != fill[g & 1]) {
            *at = g;
            return true;
        }
    for (int i = 0; i <= c->nblocks; i++) {
        size_t end = i < c->nblocks ? c->blocks[i].offset : c->tcm_reach;
        if ((*at = changed(c, start, end)) >= 0)
            return true;
        if (i < c->nblocks) {
            *block = i;
            *at = changed(c, (size_t)c->blocks[i].offset + c->blocks[i].req,
                          (size_t)c->blocks[i].offset + c->blocks[i].size);
            if (*at >= 0)
                return true;
            start = (size_t)c->blocks[i].offset + c->blocks[i].size;
        }
    }
    /* the guard after the pool: past the last block, if one ends at the pool's end */
    if ((*at = changed(c, pool, pool + NOPI_TCM_GUARD)) >= 0) {
        *block = c->nblocks > 0 &&
                 c->blocks[c->nblocks - 1].offset + c->blocks[c->nblocks - 1].size == pool
                 ? c->nblocks - 1 : -1;
        return true;
    }
    *block = -1;
    return false;
}

void nopi_tcm_release(nopi_core *c, int block)
{
    /* the pool keeps the fill pattern where no block is (the top comment) */
    const nopi_tcm_block *b = &c->blocks[block];
    fill_range(c->tcm, b->offset, (size_t)b->offset + b->size);
    c->tcm_used -= c->blocks[block].size;
    memmove(&c->blocks[block], &c->blocks[block + 1],
            (size_t)(c->nblocks - block - 1) * sizeof c->blocks[0]);
    c->nblocks--;
}
