/*
 * devsyms.c - which undefined symbols a compute (device) object may have.
 *
 * The device runs kernels against the neuronop runtime and a small libc: printf (through
 * nt_printf), memory and string functions, and math.h.  Anything else - fopen, malloc, threads,
 * errno - does not exist there, so `neuronop build` refuses a kernel that needs it rather than
 * letting it work on the host and fail on hardware.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/api.h"
#include "gen.h"

/* The kernel API: every name in api.def. */
static const char *const api_names[] = {
#define NT_API(ret, name, params) #name,
#include "base/api.def"
#undef NT_API

};

/* Each api.def entry must have the type neuronop.h declares for it: the trampolines forward
 * calls made against those declarations, so a mismatch would be a silent ABI break. */
#define NT_API(ret, name, params) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret (*) params), \
                   "api.def and neuronop.h disagree about " #name);
#define NT_API_LIBC(ret, name, params)
#include "base/api.def"
#undef NT_API
#undef NT_API_LIBC

/* abi.h's twin of nt_scalar must have its layout. */
_Static_assert(sizeof(struct nt__scalar_abi) == sizeof(nt_scalar) &&
               offsetof(struct nt__scalar_abi, i) == offsetof(nt_scalar, i) &&
               offsetof(struct nt__scalar_abi, is_int) == offsetof(nt_scalar, is_int),
               "abi.h's nt__scalar_abi and neuronop.h's nt_scalar differ");

static const char *const libc_names[] = {
    /* memory and strings */
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp",
    "strncmp", "strcpy", "strncpy", "strcat", "strncat", "strchr", "strrchr", "strstr",
    "strspn", "strcspn", "strpbrk",
    /* integer helpers from stdlib.h that need no state */
    "abs", "labs", "llabs",
    /* libtcc's runtime helpers (libtcc1.a) */
    "__fixsfdi", "__fixdfdi", "__fixxfdi", "__fixunssfdi", "__fixunsdfdi", "__fixunsxfdi",
    "__floatundisf", "__floatundidf", "__floatundixf", "__va_arg", "alloca",
    "__bound_alloca",   /* alloca and variable-length arrays under memcheck */
};

/* math.h: each name also comes with an "f" (float) and an "l" (long double) variant.  The
 * last line is glibc's: for a compiler it does not take for GCC, as libtcc, its math.h
 * makes the classification macros (isnan, isinf, isfinite, signbit, fpclassify, isnormal)
 * calls of these. */
static const char *const math_names[] = {
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logb", "pow",
    "sqrt", "cbrt", "hypot", "fabs", "floor", "ceil", "round", "trunc", "rint", "nearbyint",
    "lround", "llround", "lrint", "llrint", "fmod", "remainder", "fmin", "fmax", "fdim", "fma",
    "erf", "erfc", "tgamma", "lgamma", "copysign", "frexp", "ldexp", "modf", "scalbn",
    "ilogb", "nextafter", "nexttoward", "remquo", "scalbln", "nan",
    /* what it declares by default besides (glibc's _DEFAULT_SOURCE: a reviewer's find) */
    "j0", "j1", "jn", "y0", "y1", "yn", "gamma", "lgamma_r", "drem", "significand",
    "finite", "scalb", "isinf", "isnan",
    "__fpclassify", "__finite", "__isinf", "__isnan", "__signbit",
};

static bool in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

static bool math_name(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < NOPI_ARRAY_LEN(math_names); i++) {
        size_t n = strlen(math_names[i]);
        if (strncmp(name, math_names[i], n) == 0 &&
            (len == n || (len == n + 1 && (name[n] == 'f' || name[n] == 'l'))))
            return true;
    }
    return false;
}

bool nopi_device_symbol_allowed(const char *name)
{
    return in_list(name, api_names, NOPI_ARRAY_LEN(api_names)) ||
           in_list(name, libc_names, NOPI_ARRAY_LEN(libc_names)) ||
           nopi_gen_is_bound_hook(name) ||   /* memcheck's instrumentation */
           math_name(name);
}

const char *nopi_device_symbol_header(const char *name)
{
    if (math_name(name))
        return "<math.h>";
    if (in_list(name, api_names, NOPI_ARRAY_LEN(api_names)))
        return "<neuronop.h>";
    if (strncmp(name, "mem", 3) == 0 || strncmp(name, "str", 3) == 0)
        return in_list(name, libc_names, NOPI_ARRAY_LEN(libc_names)) ? "<string.h>" : NULL;
    if (strcmp(name, "abs") == 0 || strcmp(name, "labs") == 0 || strcmp(name, "llabs") == 0)
        return "<stdlib.h>";
    return NULL;
}

bool nopi_device_symbol_closest(const char *name, char *buf, size_t size)
{
    /* only a name meant as the kernel API's: "exit" is no misspelt "exp" */
    static const char *const prefixes[] = { "nt_", "tcm_", "get_" };
    bool api = false;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(prefixes) && !api; i++)
        api = strncmp(name, prefixes[i], strlen(prefixes[i])) == 0;
    if (!api)
        return false;
    const char *cands[NOPI_ARRAY_LEN(api_names)];
    size_t n = 0;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(api_names); i++)
        if (strncmp(api_names[i], "nt__", 4) != 0)   /* not the runtime's own */
            cands[n++] = api_names[i];
    const char *best = nop_closest(name, cands, n);
    if (best)
        snprintf(buf, size, "%s", best);
    return best != NULL;
}
