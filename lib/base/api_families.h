/*
 * api_families.h - the families of the kernel API, as X-macro lists: one home for which
 * element-wise ops and dtypes exist.  api.def spells out each family member's signatures
 * from these lists, and the runtime (lib/device) declares, implements and tables them from
 * the same lists, so a new op or dtype is one word here.
 */
#ifndef NEURONOP_API_FAMILIES_H
#define NEURONOP_API_FAMILIES_H

/* ops on one tensor: nt_NAME(self), nt_NAME_out(out, self) */
#define NOPI_UNARY_OPS(X) X(abs) X(ceil) X(floor) X(sin) X(cos) X(tan) X(log) X(log2) \
    X(log10) X(exp) X(bitwise_not)
/* ops on two tensors or a tensor and a scalar: nt_NAME, nt_NAME_s and their _out forms */
#define NOPI_BINARY_OPS(X) X(mul) X(div) X(bitwise_and) X(bitwise_or)
/* the same with an alpha scalar scaling `other` */
#define NOPI_ALPHA_OPS(X) X(add) X(sub)
/* dtype suffixes and the C type their elements are read and written as */
#define NOPI_DTYPES(X) X(f32, float) X(bf16, float) X(f16, float) X(i32, int32_t) \
    X(i8, int8_t) X(i64, int64_t) X(i16, int16_t) X(u8, uint8_t)

#endif /* NEURONOP_API_FAMILIES_H */
