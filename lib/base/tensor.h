/*
 * tensor.h - tensors as the runtime sees them (internal): struct nt_tensor, dtypes, element
 * access by double or int64 whatever the storage type.
 *
 * A tensor has a dtype, up to 8 dimensions, and either data (numel * itemsize bytes, C order)
 * or none (a shape-only tensor, which is what shape functions see).  Device-side bookkeeping
 * for the rule checks hangs off `track` and belongs to the run that created it.
 */
#ifndef NEURONOP_TENSOR_H
#define NEURONOP_TENSOR_H

#include "api.h"
#include "internal.h"

#define NOPI_MAX_DIMS 8

#define NOPI_TENSOR_MAGIC 0x4e54454eu   /* "NTEN": catches a pointer that is no tensor */

struct nt_tensor {
    uint32_t magic;
    nt_dtype dtype;
    int ndim;
    int64_t sizes[NOPI_MAX_DIMS];
    int64_t numel;
    size_t itemsize;
    unsigned char *data;        /* NULL when shape_only */
    bool shape_only;            /* a tensor seen by a shape function: no data to touch */
    bool readonly;              /* an op input: kernels may not write it */
    int coherence;              /* NT_COHERENT, NT_INCOHERENT_VERBOSE, NT_INCOHERENT_QUIET */
    struct nopi_track *track;   /* accessor bookkeeping during a run; NULL outside one */
    struct nt_tensor *next;     /* the owner's list of tensors to free */
};

/* dtype facts; the name is numpy's ("float32"), the suffix the API's ("f32"). */
size_t nopi_dtype_size(nt_dtype d);
const char *nopi_dtype_name(nt_dtype d);
const char *nopi_dtype_suffix(nt_dtype d);
/* The article the name takes in a message: "an" before int8 to int64, "a" before float32,
 * bfloat16 and uint8 (said "you-int8"), so that "%s %s tensor" reads "an int32 tensor". */
const char *nopi_dtype_article(nt_dtype d);
/* "a" or "an", as English reads the number text starts with ("an 8x4 tensor", "an
 * 11-element tensor"; "a" when text starts with no digit). */
const char *nopi_number_article(const char *text);
bool nopi_dtype_is_float(nt_dtype d);
/* Parses a name or suffix ("float32", "f32", "bfloat16", "bf16", ...); -1 when unknown. */
int nopi_dtype_parse(const char *s);
/* The dtypes' names as a list to show ("float32, bfloat16, ... or uint8"), into buf. */
void nopi_dtype_names(char *buf, size_t size);

/* Allocates a tensor with zeroed data (or none when shape_only), its pages mapped at once,
 * huge ones when it is large (nopi_host_zalloc: every element is soon written or read).  NULL
 * on no memory or when the element count overflows.  Free with nopi_tensor_free. */
nt_tensor *nopi_tensor_alloc(nt_dtype d, int ndim, const int64_t *sizes, bool shape_only);
/* As nopi_tensor_alloc with data, each byte of it `byte` rather than 0. */
nt_tensor *nopi_tensor_alloc_filled(nt_dtype d, int ndim, const int64_t *sizes,
                                    unsigned char byte);
void nopi_tensor_free(nt_tensor *t);
/* Checks a shape against the device's limits (gpsimd.md): up to 8 dims of at most 65535, or
 * up to 4 dims of at most 4294967295, each at least 0.  Writes why into buf when not. */
bool nopi_shape_ok(int ndim, const int64_t *sizes, char *why, size_t size);
bool nopi_same_shape(const nt_tensor *a, const nt_tensor *b);
/* "32x4096", for messages. */
void nopi_shape_str(const nt_tensor *t, char *buf, size_t size);

/* Element i (flattened) as double / as int64, and stores with conversion (bf16 and f16 round
 * to nearest even; integers are truncated toward zero and wrap to their width). */
double nopi_get_f(const nt_tensor *t, int64_t i);
int64_t nopi_get_i(const nt_tensor *t, int64_t i);
void nopi_set_f(nt_tensor *t, int64_t i, double v);
void nopi_set_i(nt_tensor *t, int64_t i, int64_t v);

uint16_t nopi_f32_to_bf16(float v);
float nopi_bf16_to_f32(uint16_t v);
uint16_t nopi_f32_to_f16(float v);
float nopi_f16_to_f32(uint16_t v);

#endif /* NEURONOP_TENSOR_H */
