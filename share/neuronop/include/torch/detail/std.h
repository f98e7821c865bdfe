/*
 * torch/detail/std.h - the standard headers torch's <torch/torch.h> brings with it and
 * kernels use without including them: assert, abort, memcpy and math (the device has them,
 * neuronop-cxx(3)).  <cmath>, as libtorch's has it, not the C++ <math.h>: that one also puts
 * std's float overloads in the global namespace, so an unqualified exp(v) of a float was
 * expf, where against libtorch it is exp of a double, rounded once (t0130's
 * libm_unqualified).
 *
 * Only standard headers, and nothing that depends on a macro a source defines: neuronop
 * build gives this file to every C++ source before its first line (-include), precompiled
 * once per compiler and flags (neuronop-build(1), "Precompiled header"), rather than parsed
 * again by each.  <assert.h> and <cassert> have no include guard, so a
 * source that defines NDEBUG before including <torch/torch.h> still gets its assert.
 */
#ifndef NEURONOP_TORCH_DETAIL_STD_H
#define NEURONOP_TORCH_DETAIL_STD_H

/* libc's stdio first: neuronop.h, and then torch/detail/printf.h, make printf the device's
 * printf, and a later <cstdio> must not undo that, so it is included here, before the
 * macro exists. */
#include <stdio.h>
#include <cstdio>
#include <stddef.h>
#include <stdint.h>
#include <assert.h>
#include <float.h>
#include <cmath>
#include <stdlib.h>
#include <string.h>
#include <initializer_list>
#include <limits>
#include <type_traits>

#endif /* NEURONOP_TORCH_DETAIL_STD_H */
