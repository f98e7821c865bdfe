/*
 * mangle.h - reads the Itanium C++ names of functions in compiled objects (internal).
 *
 * neuronop links C++ kernels and shape functions by their mangled symbol and checks their
 * parameter lists from it, so lib/ (C) needs no C++ runtime's demangler.  Only what an op's
 * functions can be needs reading: a function name, optionally in namespaces, with parameters
 * of builtin types, classes in namespaces, const, pointers and references.  A symbol outside
 * that subset (templates, local names, operators) is reported as unreadable, never misread.
 */
#ifndef NEURONOP_MANGLE_H
#define NEURONOP_MANGLE_H

#include "internal.h"

#define NOPI_CXX_MAX_PARAMS 16

/* One parameter: the op argument type it is (enum nop_argtype), or -1 for any other type. */
typedef struct nopi_cxxparam {
    int kind;
    bool byref;           /* const T & of one of the four kinds */
} nopi_cxxparam;

typedef struct nopi_cxxfn {
    char name[256];       /* the unqualified function name ("relu" for _Z4reluN5torch6TensorE) */
    char qual[512];       /* with its namespaces ("ns::relu") */
    bool cxx;             /* a mangled name; false for a C symbol (params unknown) */
    int nparams;          /* -1 when the parameter list is outside the subset */
    nopi_cxxparam params[NOPI_CXX_MAX_PARAMS];
    char display[768];    /* "relu(const torch::Tensor &, int)" or the C name */
} nopi_cxxfn;

/* Reads symbol `sym`.  False when it is a mangled name that is not a function this reader
 * understands at all (then only out->name may be set). */
bool nopi_cxx_read(const char *sym, nopi_cxxfn *out);

/* "f(torch::Tensor, double)": fname with the C++ types of an op's arguments. */
void nopi_cxx_signature(const char *fname, int nargs, const int *kinds, const bool *byref,
                        char *buf, size_t size);

#endif /* NEURONOP_MANGLE_H */
