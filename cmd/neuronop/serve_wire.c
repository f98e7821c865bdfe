/*
 * serve_wire.c - the supervisor's replies (serve.h): building them, and which exception
 * class each failure becomes in Python.
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

/* Which exception a failure becomes.  The device's messages say what ended a run; their
 * openings are the device's wording (lib/device), and t0601 runs each kind through Python,
 * so a change of wording shows there. */
static int class_of(const nop_error *e)
{
    static const struct { const char *opening; int cls; } device[] = {
        { "timeout:", CLASS_TIMEOUT },
        { "kernel crashed:", CLASS_CRASH },
        { "stack overflow:", CLASS_CRASH },
        { "the device process died", CLASS_CRASH },
        { "user code ended the device process", CLASS_CRASH },
        { "the device process sent a malformed", CLASS_CRASH },
        { "kernel made a system call", CLASS_FORBIDDEN },
    };
    switch (e->kind) {
    case NOP_ERR_INPUT: return CLASS_INPUT;
    case NOP_ERR_COMPILE: return CLASS_BUILD;
    case NOP_ERR_NOMEM: return CLASS_NOMEM;
    default: break;
    }
    for (size_t i = 0; i < sizeof device / sizeof device[0]; i++)
        if (strncmp(e->diag.msg, device[i].opening, strlen(device[i].opening)) == 0)
            return device[i].cls;
    return CLASS_DEVICE;
}

void reply_diag(buf *b, uint32_t kind, const nop_diag *d, int errkind, int cls)
{
    const char *s[4] = { d->file, d->where, d->msg, d->detail };
    struct diag_item di = { (int32_t)d->severity, d->line, d->col, errkind, cls, { 0 } };
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
    reply_diag(b, ITEM_ERROR, &e->diag, (int)e->kind, class_of(e));
}

/* A failure of the request itself (what Python sent), as an input error. */
void reply_protocol(buf *b, const char *msg)
{
    nop_diag d = { .severity = NOP_SEV_ERROR };
    snprintf(d.msg, sizeof d.msg, "%s", msg);
    reply_diag(b, ITEM_ERROR, &d, NOP_ERR_INPUT, CLASS_PROTOCOL);
}
