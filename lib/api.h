/*
 * api.h - the runtime's function table, struct nt__api, one member per entry of api.def
 * (internal).  A built library's trampolines jump through member offsets of this struct, so
 * its layout is part of the library format (NT_ABI_VERSION).
 */
#ifndef NEURONOP_API_H
#define NEURONOP_API_H

#define NT_RUNTIME
#include <assert.h>   /* __assert_fail and abort are part of the table: kernels may assert */
#include <stdlib.h>
#include <neuronop.h>
#include <neuronop/abi.h>

struct nt__api {
#define NT_API(ret, name, params) ret (*name) params;
#include "api.def"
#undef NT_API
};

#endif /* NEURONOP_API_H */
