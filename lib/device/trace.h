/*
 * trace.h - recording what each core did, when, for `neuronop bench --trace` (internal).
 *
 * A traced run records spans per core: TCM copies, tensor-library calls, printf calls and
 * stream lifetimes.  Each end of a span is a point holding the host clock and what the cost
 * model needs to place it on the device clock (the core's compute time and its counted
 * cycles so far), so one recording serves both --trace-clock axes.  Element accesses are
 * never spans (a kernel makes millions): they are counted in the core's kernel span.  A
 * core keeps at most NOPI_TRACE_SPANS spans; later ones are only counted, by kind.
 */
#ifndef NEURONOP_TRACE_H
#define NEURONOP_TRACE_H

#include <stdint.h>

#include "base/internal.h"

#define NOPI_TRACE_SPANS 2000

enum nopi_trace_kind { NOPI_SPAN_TCM, NOPI_SPAN_TENSORLIB, NOPI_SPAN_PRINTF, NOPI_SPAN_STREAM,
                       NOPI_SPAN_KINDS };

typedef struct nopi_trace_point {
    double host;                /* seconds since the run began */
    double compute;             /* the core's host seconds in its own code so far */
    double counted;             /* the core's cycles so far from counted actions */
} nopi_trace_point;

typedef struct nopi_trace_span {
    int kind;                   /* enum nopi_trace_kind */
    int stream;                 /* NOPI_SPAN_STREAM: the stream's number on its core */
    nopi_trace_point a, b;
} nopi_trace_span;

/* One core's recording.  spans is malloc'd on the first span. */
typedef struct nopi_trace {
    nopi_trace_span *spans;
    int nspans;
    int64_t total[NOPI_SPAN_KINDS];     /* spans made, recorded or not */
    nopi_trace_point start, end;        /* the kernel's run on the core */
} nopi_trace;

/* The run's recording, handed to nop_run_result (libneuronop.h's nop_trace). */
struct nop_trace {
    int ncores;
    nopi_trace *cores;          /* ncores, each owning its spans */
};

/* The category of the cost model a kind of span is charged to, and the reverse (-1 when
 * calls of that category are not drawn as spans). */
int nopi_trace_kind_of(int category);

struct nopi_core;
/* Where core c is at host time now (a nopi_now() reading).  Only for a traced run, on the
 * core's own thread.  Callers timing a runtime call pass the very readings they charge the
 * call with, so no host time between them is mistaken for compute. */
nopi_trace_point nopi_trace_at(struct nopi_core *c, double now);
/* Records a span of kind from a to now (or only counts it once the core's spans are full);
 * stream numbers NOPI_SPAN_STREAM spans. */
void nopi_trace_span_end(struct nopi_core *c, int kind, int stream, nopi_trace_point a,
                         double now);
/* At the end of the core's run (its seconds known): sets the kernel span, ends the
 * lifetimes of streams the kernel left open, and scales the compute time of every point
 * by on_cpu (the share of its wall time the core had a CPU for), as its total was. */
void nopi_trace_finish(struct nopi_core *c, double compute_seconds, double on_cpu);
/* Frees a recording made by device.c (NULL is fine). */
void nopi_trace_free(struct nop_trace *t);

#endif
