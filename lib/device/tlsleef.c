/*
 * tlsleef.c - the tensor library's float32 transcendental functions as ATen 1.13 computes
 * them on x86: its vectorised loops (CPU capability AVX2, its default there) call Sleef's
 * 8-lane functions (Sleef_sinf8_u10 ...), which round differently from libm in a few
 * percent of elements (within 1 ulp).  Calling the same functions of the same library
 * (libsleef, which Debian's torch links too) gives torch's bits.
 *
 * This file alone is compiled with -mavx2 -mfma (Makefile): the 8-lane functions take and
 * return AVX registers.  Nothing here may run on a processor without them, so the caller
 * asks nopi_sleef_ok (tlkernel.c, compiled for any x86-64) first.  Sleef's sin and cos do
 * not compute each lane on its own: one large (past about 125), infinite or NaN lane sends
 * all 8 down a slower path that rounds the others otherwise, so the unary functions are
 * given ATen's groups of 8 elements (nopi_sleef8).  pow's lanes are its own: one element is
 * given in every lane (nopi_sleef).
 */
#include "tlsleef.h"

#if NOPI_HAVE_SLEEF
#include <immintrin.h>
#include <sleef.h>

static __m256 apply(nopi_sleef_fn fn, __m256 x, __m256 y)
{
    switch (fn) {
    case NOPI_SLEEF_SIN: return Sleef_sinf8_u10(x);
    case NOPI_SLEEF_COS: return Sleef_cosf8_u10(x);
    case NOPI_SLEEF_TAN: return Sleef_tanf8_u10(x);
    case NOPI_SLEEF_EXP: return Sleef_expf8_u10(x);
    case NOPI_SLEEF_LOG: return Sleef_logf8_u10(x);
    case NOPI_SLEEF_LOG2: return Sleef_log2f8_u10(x);
    case NOPI_SLEEF_LOG10: return Sleef_log10f8_u10(x);
    default: return Sleef_powf8_u10(x, y);
    }
}

float nopi_sleef(nopi_sleef_fn fn, float a, float b)
{
    return _mm256_cvtss_f32(apply(fn, _mm256_set1_ps(a), _mm256_set1_ps(b)));
}

void nopi_sleef8(nopi_sleef_fn fn, const float in[8], float out[8])
{
    _mm256_storeu_ps(out, apply(fn, _mm256_loadu_ps(in), _mm256_setzero_ps()));
}
#endif
