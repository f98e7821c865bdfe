/*
 * lines.h - where a library's kernel code came from (internal): source lines, functions and
 * local variables, read from the stabs debug info libtcc writes with -g.
 *
 * memcheck uses it to name the line that made a bad access, the function whose local array
 * it overran, the static array it overran, and the line that allocated a TCM buffer.  Debug info is a nicety: a library
 * without it gives a NULL table, and every lookup on a NULL table finds nothing.
 */
#ifndef NEURONOP_LINES_H
#define NEURONOP_LINES_H

#include "base/internal.h"

typedef struct nopi_lines nopi_lines;

/* Reads the stabs of a library from its file image (the file's bytes; the table copies what
 * it keeps), the library being loaded at address `base`.  NULL when it has none or memory
 * runs out.  Free with nopi_lines_free. */
nopi_lines *nopi_lines_parse(const char *image, size_t len, uintptr_t base);
/* The same, from the file at `path`; NULL also when it cannot be read. */
nopi_lines *nopi_lines_read(const char *path, uintptr_t base);
void nopi_lines_free(nopi_lines *l);

/* What the code at address pc is.  Fills *file (as the source named it; may be relative to
 * *dir, the folder it was compiled in), *line and *func, each NULL or 0 when unknown; the
 * strings live as long as the table.  False when pc is in no function the table knows. */
typedef struct nopi_where {
    const char *file, *dir, *func;
    int line;
} nopi_where;
bool nopi_lines_find(const nopi_lines *l, uintptr_t pc, nopi_where *w);

/* The name of the local variable at frame offset `off` in the function holding pc; NULL
 * when unknown.  The string lives as long as the table. */
const char *nopi_lines_local(const nopi_lines *l, uintptr_t pc, long off);

/* The name of the static variable at addr; NULL when unknown.  The string lives as long as
 * the table. */
const char *nopi_lines_static(const nopi_lines *l, uintptr_t addr);

#endif /* NEURONOP_LINES_H */
