/* Unit tests of the tensor library's dtype rules (lib/device/tlpromote.c) against c10's:
 * promoteTypes, result_type's categories, canCast and the checked Scalar conversion. */
#include <math.h>
#include <string.h>

#include "unit.h"
#include "device/tensorlib.h"

static nt_tensor *tensor(nt_dtype d, int ndim)
{
    int64_t n = 2;
    return nopi_tensor_alloc(d, ndim, &n, false);
}

static void promote_types(void **state)
{
    assert_int_equal(nopi_promote(NT_U8, NT_I8), NT_I16);
    assert_int_equal(nopi_promote(NT_U8, NT_I32), NT_I32);
    assert_int_equal(nopi_promote(NT_I64, NT_I8), NT_I64);
    assert_int_equal(nopi_promote(NT_BF16, NT_F16), NT_F32);
    assert_int_equal(nopi_promote(NT_I32, NT_F16), NT_F16);
    assert_int_equal(nopi_promote(NT_BF16, NT_F32), NT_F32);
}

static void result_type_categories(void **state)
{
    nt_tensor *i32 = tensor(NT_I32, 1), *f16 = tensor(NT_F16, 1), *i8 = tensor(NT_I8, 1);
    nt_tensor *z64 = tensor(NT_I64, 0), *zf = tensor(NT_F32, 0);
    nopi_operand a[2] = { { i32, nt_scalar_i(0) }, { NULL, nt_scalar_f(2.5) } };
    assert_int_equal(nopi_result_type(a, 2), NT_F32);      /* a float Scalar: default float */
    a[0].t = f16;
    assert_int_equal(nopi_result_type(a, 2), NT_F16);      /* the tensor's float wins */
    a[0].t = i8;
    a[1].s = nt_scalar_i(300);
    assert_int_equal(nopi_result_type(a, 2), NT_I8);       /* an int Scalar never widens */
    nopi_operand b[2] = { { i8, nt_scalar_i(0) }, { z64, nt_scalar_i(0) } };
    assert_int_equal(nopi_result_type(b, 2), NT_I8);       /* 0-dim below dimensioned */
    b[1].t = zf;
    assert_int_equal(nopi_result_type(b, 2), NT_F32);      /* ... unless of a higher category */
    nopi_tensor_free(i32);
    nopi_tensor_free(f16);
    nopi_tensor_free(i8);
    nopi_tensor_free(z64);
    nopi_tensor_free(zf);
}

static void can_cast(void **state)
{
    assert_false(nopi_can_cast(NT_F32, NT_I32));
    assert_false(nopi_can_cast(NT_BF16, NT_U8));
    assert_true(nopi_can_cast(NT_I64, NT_I8));
    assert_true(nopi_can_cast(NT_F32, NT_BF16));
    assert_true(nopi_can_cast(NT_I32, NT_F16));
}

static void checked_scalars(void **state)
{
    int64_t i;
    float f;
    assert_false(nopi_scalar_checked(nt_scalar_i(300), NT_I8, &i, &f));
    assert_true(nopi_scalar_checked(nt_scalar_i(-1), NT_U8, &i, &f));   /* c10 lets it wrap */
    assert_int_equal(i, 255);
    assert_false(nopi_scalar_checked(nt_scalar_i(-256), NT_U8, &i, &f));
    assert_false(nopi_scalar_checked(nt_scalar_f(NAN), NT_I32, &i, &f));
    assert_false(nopi_scalar_checked(nt_scalar_f(127.5), NT_I8, &i, &f));
    assert_true(nopi_scalar_checked(nt_scalar_f(2.5), NT_I32, &i, &f));
    assert_int_equal(i, 2);
    assert_false(nopi_scalar_checked(nt_scalar_f(1e6), NT_F16, &i, &f));
    assert_false(nopi_scalar_checked(nt_scalar_i(70000), NT_F16, &i, &f));
    assert_true(nopi_scalar_checked(nt_scalar_f(INFINITY), NT_F16, &i, &f));
    assert_true(nopi_scalar_checked(nt_scalar_f(65504.0), NT_F16, &i, &f));
    assert_false(nopi_scalar_checked(nt_scalar_f(1e40), NT_F32, &i, &f));
    assert_true(nopi_scalar_checked(nt_scalar_f(1.7), NT_BF16, &i, &f));
    assert_true(f == 1.703125f);                                      /* rounded to bf16 */
}

static void scalars_as_written(void **state)
{
    char b[64];
    nopi_scalar_str(nt_scalar_f(2.5), b, sizeof b);
    assert_string_equal(b, "2.5");
    nopi_scalar_str(nt_scalar_f(2.0), b, sizeof b);
    assert_string_equal(b, "2.0");
    nopi_scalar_str(nt_scalar_f(-INFINITY), b, sizeof b);
    assert_string_equal(b, "-inf");
    nopi_scalar_str(nt_scalar_f(0.1), b, sizeof b);
    assert_string_equal(b, "0.1");
    nopi_scalar_str(nt_scalar_i(-3), b, sizeof b);
    assert_string_equal(b, "-3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(promote_types),
        cmocka_unit_test(result_type_categories),
        cmocka_unit_test(can_cast),
        cmocka_unit_test(checked_scalars),
        cmocka_unit_test(scalars_as_written),
    };
    return cmocka_run_group_tests_name("tlpromote", tests, NULL, NULL);
}
