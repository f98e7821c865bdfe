/*
 * wrap.c - tensors over memory their caller owns, and reading a tensor's bytes: what a
 * program that keeps tensors in its own memory (the Python bridge's supervisor keeps them in
 * a memfd shared with Python) needs to hand them to nop_device_run and to take an output back
 * without a copy through elements.
 *
 * A wrapped tensor is an ordinary nt_tensor whose data pointer is the caller's; the device
 * only ever reads inputs through read-only views (bind.c), so the caller's memory is not
 * written.  nop_tensor_unwrap frees the record and leaves the memory alone.
 */
#include <string.h>

#include "base/internal.h"
#include "base/tensor.h"

int nop_tensor_wrap(nop_tensor **out, enum nop_dtype dtype, int ndim, const int64_t *sizes,
                    const void *data, size_t size, nop_error *err)
{
    *out = NULL;
    if ((unsigned)dtype > NOP_U8)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "dtype %d is not a device dtype",
                         (int)dtype);
    char why[256];
    if (!nopi_shape_ok(ndim, sizes, why, sizeof why))   /* the device's limits (gpsimd.md) */
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a tensor the device cannot have: "
                         "%s", why);
    nt_tensor *t = nopi_tensor_alloc((nt_dtype)dtype, ndim, sizes, true);
    if (!t)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a tensor with a negative size or "
                         "too many elements");
    size_t need = (size_t)t->numel * t->itemsize;
    if (need > size || (need && !data)) {
        nopi_tensor_free(t);
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "a tensor of %zu bytes over %zu "
                         "bytes of memory", need, size);
    }
    t->shape_only = false;
    t->data = (unsigned char *)(uintptr_t)data;   /* never written: inputs are read-only */
    *out = t;
    return 0;
}

void nop_tensor_unwrap(nop_tensor *t)
{
    if (!t)
        return;
    t->data = NULL;   /* the caller's */
    nopi_tensor_free(t);
}

const void *nop_tensor_data(const nop_tensor *t)
{
    return t->data;
}

size_t nop_tensor_nbytes(const nop_tensor *t)
{
    return t->shape_only ? 0 : (size_t)t->numel * t->itemsize;
}
