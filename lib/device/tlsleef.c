/*
 * tlsleef.c - the tensor library's float32 transcendental functions as ATen 1.13 computes
 * them on x86: its vectorised loops (CPU capability AVX2, its default there) call Sleef's
 * 8-lane functions (Sleef_sinf8_u10 ...), which round differently from libm in a few
 * percent of elements (within 1 ulp).  Calling the same functions of the same library
 * (libsleef, which Debian's torch links too) gives torch's bits.
 *
 * This file alone is compiled with -mavx2 -mfma (Makefile): the 8-lane functions take and
 * return AVX registers.  Nothing here may run on a processor without them, so the caller
 * asks nopi_sleef_ok (tlkernel.c, compiled for any x86-64) first.  Sleef computes each lane
 * on its own, so lane 0 of a vector that holds one element is that element's result in
 * ATen's loop, wherever in the tensor it is.
 */
#include "tlsleef.h"

#if NOPI_HAVE_SLEEF
#include <immintrin.h>
#include <sleef.h>

float nopi_sleef(nopi_sleef_fn fn, float a, float b)
{
    __m256 x = _mm256_set1_ps(a), r;
    switch (fn) {
    case NOPI_SLEEF_SIN: r = Sleef_sinf8_u10(x); break;
    case NOPI_SLEEF_COS: r = Sleef_cosf8_u10(x); break;
    case NOPI_SLEEF_TAN: r = Sleef_tanf8_u10(x); break;
    case NOPI_SLEEF_EXP: r = Sleef_expf8_u10(x); break;
    case NOPI_SLEEF_LOG: r = Sleef_logf8_u10(x); break;
    case NOPI_SLEEF_LOG2: r = Sleef_log2f8_u10(x); break;
    case NOPI_SLEEF_LOG10: r = Sleef_log10f8_u10(x); break;
    default: r = Sleef_powf8_u10(x, _mm256_set1_ps(b)); break;
    }
    return _mm256_cvtss_f32(r);
}
#endif
