/*
 * tcm.c - each core's TCM pool: a first-fit allocator over profile->tcm_bytes.
 *
 * The block table lives outside the pool, so a kernel that writes past a buffer cannot
 * corrupt the allocator; every copy into or out of TCM is checked against the table
 * (accessors.c), which is how an overrun becomes a message instead of a wrong answer.
 */
#include <string.h>

#include "api_impl.h"

#define ALIGN 16

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

void nopi_tcm_release(nopi_core *c, int block)
{
    c->tcm_used -= c->blocks[block].size;
    memmove(&c->blocks[block], &c->blocks[block + 1],
            (size_t)(c->nblocks - block - 1) * sizeof c->blocks[0]);
    c->nblocks--;
}
