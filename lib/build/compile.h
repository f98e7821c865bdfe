/*
 * compile.h - the libtcc boundary (internal).  Only compile.c includes <libtcc.h>.
 *
 * A nopi_cc is one libtcc compilation state producing an object file or a shared library.
 * libtcc's conventions stop here: its message strings become nop_diag records with file and
 * line (libtcc gives no columns), warnings go to the caller's sink, the first error fills the
 * caller's nop_error with status NOP_ERR_COMPILE, and a source excerpt is attached.
 *
 * Options must already be allowlisted (flags.c): libtcc exits the process on some bad ones.
 * libtcc serialises compilation with a lazily created global semaphore, so compile from one
 * thread at a time.
 */
#ifndef NEURONOP_COMPILE_H
#define NEURONOP_COMPILE_H

#include "base/internal.h"

typedef struct nopi_cc nopi_cc;
typedef enum nopi_cc_kind { NOPI_CC_OBJECT, NOPI_CC_SHARED, NOPI_CC_MEMORY } nopi_cc_kind;

/* Creates a state; tcc_dir holds libtcc1.a and tcc's include/.  NULL on no memory. */
nopi_cc *nopi_cc_new(nopi_cc_kind kind, const char *tcc_dir, nop_diag_fn *diag, void *ctx);
void nopi_cc_free(nopi_cc *cc);

void nopi_cc_define(nopi_cc *cc, const char *name, const char *value);   /* value may be NULL */
void nopi_cc_undefine(nopi_cc *cc, const char *name);
void nopi_cc_include_dir(nopi_cc *cc, const char *dir);
/* One allowlisted option; options count only before the first compile or add. */
void nopi_cc_option(nopi_cc *cc, const char *option);

/* Compiles C text; start it with #line to name the file messages point at. */
int nopi_cc_compile(nopi_cc *cc, const char *text, nop_error *err);
/* Adds an object file or archive (an earlier NOPI_CC_OBJECT's output, libtcc1.a, crtn.o). */
int nopi_cc_add_object(nopi_cc *cc, const char *path, nop_error *err);
/* Writes the output file. */
int nopi_cc_output(nopi_cc *cc, const char *path, nop_error *err);
/* NOPI_CC_MEMORY: links the compiled code into memory owned by cc, then looks a symbol up
 * (NULL when there is none). */
int nopi_cc_relocate(nopi_cc *cc, nop_error *err);
void *nopi_cc_symbol(nopi_cc *cc, const char *name);

#endif /* NEURONOP_COMPILE_H */
