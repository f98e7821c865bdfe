/*
 * serve.h - the protocol between the Python package and its supervisor (cmd-serve.c, the
 * server; serve_wire.c, replies; serve_libs.c, its libraries; python/neuronop/_client.py
 * mirrors every struct here).
 * All integers are little-endian; one SOCK_SEQPACKET message per request and per reply.
 */
#ifndef NEURONOP_SERVE_H
#define NEURONOP_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libneuronop.h"

#define MAGIC 0x42504f4eu         /* "NOPB" */
#define MAX_MESSAGE (1u << 20)
#define MAX_LIBS 256
#define MAX_DIAGS 32              /* warnings sent with one reply; the rest are counted */
#define MAX_DIMS 8

enum { REQ_ARENA = 1, REQ_LOAD, REQ_CALL, REQ_FETCH };
enum { REP_OK = 0, REP_ERROR = 1, REP_ROOM = 2 };
enum { ITEM_PRINTF = 1, ITEM_DIAG, ITEM_ERROR, ITEM_JSON };
/* An ITEM_ERROR says what failed as two numbers, which Python maps to its exception class:
 * errkind, the error's enum nop_errkind (or ERRKIND_PROTOCOL: the supervisor could not make
 * sense of the request), and fault, its enum nop_fault (nop_error_fault). */
enum { ERRKIND_PROTOCOL = 64 };
enum { CALL_PROFILE = 1 };        /* call_req.flags: model the device time */

struct hdr { uint32_t magic, type; int32_t status; uint32_t spare; };
struct call_req { uint32_t lib, op, nargs, flags; uint64_t out_offset; };
struct call_arg {
    int32_t type, dtype, ndim, is_int;
    int64_t sizes[MAX_DIMS];
    uint64_t offset;
    double d;
    int64_t i;
};
struct call_rep {
    int32_t dtype, ndim;
    int64_t sizes[MAX_DIMS];
    uint64_t offset, nbytes;
    double host_seconds, device_seconds;   /* device: the cost model's, -1 when not asked */
};
struct item { uint32_t kind, len; };
struct diag_item {
    int32_t severity, line, col, errkind, fault;
    uint32_t lens[4];                      /* file, where, msg, detail */
};

/* A library the supervisor serves (serve_libs.c).  described is nop_library_describe's (no
 * code of it runs in the supervisor): LOAD answers from it, and with the sandbox on the
 * worker is handed it and loads the code itself.  With the sandbox off the supervisor runs
 * the code: loaded is the library loaded at its first call, kept until the file at its path
 * changes (nop_library_changed), or NULL.  The served_lib owns both. */
typedef struct served_lib {
    nop_library *described;
    nop_library *loaded;
} served_lib;

/* The library a call of libs[i] runs: its described one when here is false (the sandbox
 * is on); else its loaded code, (re)loaded now if it is not loaded or its file changed
 * since (which first unloads every slot's copy of that path).  NULL with err filled when it
 * cannot be loaded.  The result belongs to libs[i] and lives until the next
 * served_runnable on libs or served_close of that slot. */
const nop_library *served_runnable(served_lib *libs, int nlibs, int i, bool here,
                                   nop_error *err);
/* Closes both libraries (either may be NULL). */
void served_close(served_lib *sl);

/* A reply being built: the header, a request's fixed part, then items. */
typedef struct buf {
    unsigned char *p;
    size_t len, cap;
    bool oom;               /* a put ran out of memory: the reply is lost */
} buf;

/* Appends n bytes; an item (struct item, then its bytes); a diagnostic as an item of kind
 * ITEM_DIAG or ITEM_ERROR (struct diag_item, then file, where, msg, detail). */
void reply_put(buf *b, const void *data, size_t n);
void reply_item(buf *b, uint32_t kind, const void *data, size_t n);
void reply_diag(buf *b, uint32_t kind, const nop_diag *d, int errkind, int fault);
/* A failed call's error, with its kind and fault. */
void reply_error(buf *b, const nop_error *e);
/* A failure of the request itself (what Python sent): ERRKIND_PROTOCOL. */
void reply_protocol(buf *b, const char *msg);

#endif /* NEURONOP_SERVE_H */
