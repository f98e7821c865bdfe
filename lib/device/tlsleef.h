/*
 * tlsleef.h - ATen's float32 transcendental functions, Sleef's (internal; see tlsleef.c).
 */
#ifndef NEURONOP_TLSLEEF_H
#define NEURONOP_TLSLEEF_H

#include <stdbool.h>

#if defined(__x86_64__)
#define NOPI_HAVE_SLEEF 1
#else
#define NOPI_HAVE_SLEEF 0   /* ATen's vectorised loops there are another library's */
#endif

typedef enum nopi_sleef_fn {
    NOPI_SLEEF_SIN, NOPI_SLEEF_COS, NOPI_SLEEF_TAN, NOPI_SLEEF_EXP, NOPI_SLEEF_LOG,
    NOPI_SLEEF_LOG2, NOPI_SLEEF_LOG10, NOPI_SLEEF_POW
} nopi_sleef_fn;

/* Whether this processor runs Sleef's AVX2 functions, as ATen's default CPU capability
 * then does: false elsewhere (ATen computes otherwise there too; libm stands in). */
static inline bool nopi_sleef_ok(void)
{
#if NOPI_HAVE_SLEEF
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

/* fn of a (a to the power b for NOPI_SLEEF_POW) as Sleef's 8-lane function computes it with
 * a in every lane: pow's result, whose lanes do not depend on each other.  Only where
 * nopi_sleef_ok(). */
float nopi_sleef(nopi_sleef_fn fn, float a, float b);
/* fn (not NOPI_SLEEF_POW) of the 8 lanes in[0..7] into out[0..7], as Sleef's 8-lane function
 * computes them together: sin's and cos's lanes depend on each other (tlsleef.c).  Only
 * where nopi_sleef_ok(). */
void nopi_sleef8(nopi_sleef_fn fn, const float in[8], float out[8]);

#endif /* NEURONOP_TLSLEEF_H */
