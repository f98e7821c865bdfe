/*
 * serve_wire.c - the supervisor's replies (serve.h): building them, an error with its kind
 * and fault, from which Python chooses the exception class.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

void reply_put(buf *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

void reply_item(buf *b, uint32_t kind, const void *data, size_t n)
{
    struct item it = { kind, (uint32_t)n };
    reply_put(b, &it, sizeof it);
    reply_put(b, data, n);
}

void reply_diag(buf *b, uint32_t kind, const nop_diag *d, int errkind, int fault)
{
    const char *s[4] = { d->file, d->where, d->msg, d->detail };
    struct diag_item di = { (int32_t)d->severity, d->line, d->col, errkind, fault, { 0 } };
    uint32_t total = sizeof di;
    for (int i = 0; i < 4; i++)
        total += di.lens[i] = (uint32_t)strlen(s[i]);
    struct item it = { kind, total };
    reply_put(b, &it, sizeof it);
    reply_put(b, &di, sizeof di);
    for (int i = 0; i < 4; i++)
        reply_put(b, s[i], di.lens[i]);
}

void reply_error(buf *b, const nop_error *e)
{
    reply_diag(b, ITEM_ERROR, &e->diag, (int)e->kind, (int)nop_error_fault(e));
}

/* A failure of the request itself (what Python sent). */
void reply_protocol(buf *b, const char *msg)
{
    nop_diag d = { .severity = NOP_SEV_ERROR };
    snprintf(d.msg, sizeof d.msg, "%s", msg);
    reply_diag(b, ITEM_ERROR, &d, ERRKIND_PROTOCOL, NOP_FAULT_NONE);
}
