/*
 * compile.h - the libtcc boundary (internal).  Only compile.c includes <libtcc.h>.
 *
 * A nopi_cc is one libtcc compilation state producing an object file or a shared library.
 * libtcc's conventions stop here: its message strings become nop_diag records with file and
 * line (libtcc gives no columns), warnings go to the caller's sink, the first error fills the
 * caller's nop_error with status NOP_ERR_COMPILE, and a source excerpt is attached.
 *
 * The calls record; the work happens at nopi_cc_output, in a child process (one per confine,
 * serving every compile: compile.c) under the limits
 * and Landlock ruleset of a nopi_confine (confine.h): a compile bomb, libtcc's exit(1) on a
 * bad option or full memory, and libtcc's global state stay in the child.  With no confine,
 * and always for NOPI_CC_MEMORY (neuronop's own code), libtcc runs in this process: there
 * options must already be allowlisted (flags.c), and compile from one thread at a time
 * (libtcc's lazily created global semaphore).
 */
#ifndef NEURONOP_COMPILE_H
#define NEURONOP_COMPILE_H

#include "base/internal.h"

typedef struct nopi_confine nopi_confine;

typedef struct nopi_cc nopi_cc;
typedef enum nopi_cc_kind { NOPI_CC_OBJECT, NOPI_CC_SHARED, NOPI_CC_MEMORY } nopi_cc_kind;

/* Creates a state; tcc_dir holds libtcc1.a and tcc's include/; confine (borrowed, must outlive
 * the state; NULL: in this process) bounds the compile.  NULL on no memory. */
nopi_cc *nopi_cc_new(nopi_cc_kind kind, const char *tcc_dir, nopi_confine *confine,
                     nop_diag_fn *diag, void *ctx);
/* Ends the child that serves the compiles confined by c (started at the first; none: no-op)
 * and reaps it and its process group.  Call before nopi_confine_free. */
void nopi_cc_server_stop(nopi_confine *c);
/* Lets that child end (it exits at the end of its socket) while the caller goes on, after
 * its last compile: nopi_cc_server_stop reaps it then, most often already gone, so its exit
 * is off the build's path.  A compile after this starts a new child. */
void nopi_cc_server_release(nopi_confine *c);
/* What is compiled, as the user wrote it ("relu.c"), for the message of a limit. */
void nopi_cc_name(nopi_cc *cc, const char *name);
void nopi_cc_free(nopi_cc *cc);

void nopi_cc_define(nopi_cc *cc, const char *name, const char *value);   /* value may be NULL */
void nopi_cc_undefine(nopi_cc *cc, const char *name);
void nopi_cc_include_dir(nopi_cc *cc, const char *dir);
/* One allowlisted option; options count only before the first compile or add. */
void nopi_cc_option(nopi_cc *cc, const char *option);

/* Compiles C text; start it with #line to name the file messages point at.  Recorded: its
 * errors come from nopi_cc_output or nopi_cc_relocate (-1 here only when out of memory). */
int nopi_cc_compile(nopi_cc *cc, const char *text, nop_error *err);
/* Adds an object file or archive (an earlier NOPI_CC_OBJECT's output, libtcc1.a, crtn.o);
 * recorded like nopi_cc_compile. */
int nopi_cc_add_object(nopi_cc *cc, const char *path, nop_error *err);
/* Runs everything recorded and writes the output file: 0, or -1 with err filled by the
 * first error, or "compiling 'NAME' went past N s" (N MB) when a limit ended it. */
int nopi_cc_output(nopi_cc *cc, const char *path, nop_error *err);
/* True when the last failure was an error in compiled text (not a limit, not a link). */
bool nopi_cc_source_error(const nopi_cc *cc);
/* NOPI_CC_MEMORY: links the compiled code into memory owned by cc, then looks a symbol up
 * (NULL when there is none). */
int nopi_cc_relocate(nopi_cc *cc, nop_error *err);
void *nopi_cc_symbol(nopi_cc *cc, const char *name);

#endif /* NEURONOP_COMPILE_H */
