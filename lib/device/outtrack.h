/*
 * outtrack.h - tracking which output elements each core writes (internal; see outtrack.c).
 */
#ifndef NEURONOP_OUTTRACK_H
#define NEURONOP_OUTTRACK_H

#include "core.h"

/* The calling core wrote output elements [begin, end). */
void nopi_out_write(nopi_core *c, int64_t begin, int64_t end);
/* The calling core reads output elements [begin, end): fails it (initcheck) unless they were
 * written by itself or by a core that has finished. */
void nopi_out_read(nopi_core *c, int64_t begin, int64_t end, const char *fn);
/* After all cores: fills d->msg and returns -1 for a race or output no core wrote (as the
 * run's checks ask), 0 otherwise. */
int nopi_out_finish(nopi_run *run, nop_diag *d);

#endif /* NEURONOP_OUTTRACK_H */
