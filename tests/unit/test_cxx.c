/* Unit tests of reading C++ symbols and compiler logs (lib/build/mangle.c, lib/build/syscc.c,
 * lib/build/cxxdiag.c), and of device messages in C++ terms (lib/device/cxxnames.c). */
#include "unit.h"
#include "base/mangle.h"
#include "build/syscc.h"
#include "device/core.h"

static void reads_op_signatures(void **state)
{
    (void)state;
    nopi_cxxfn f;
    assert_true(nopi_cxx_read("_Z14relu_fwd_shapeRKN5torch6TensorE", &f));
    assert_true(f.cxx);
    assert_string_equal(f.name, "relu_fwd_shape");
    assert_int_equal(f.nparams, 1);
    assert_int_equal(f.params[0].kind, NOP_ARG_TENSOR);
    assert_true(f.params[0].byref);
    assert_string_equal(f.display, "relu_fwd_shape(const torch::Tensor &)");

    /* torch is S_, torch::Tensor S0_: the Scalar is torch's, by const reference */
    assert_true(nopi_cxx_read("_Z11scale_shapeN5torch6TensorEdlRKNS_6ScalarE", &f));
    assert_int_equal(f.nparams, 4);
    assert_int_equal(f.params[0].kind, NOP_ARG_TENSOR);
    assert_false(f.params[0].byref);
    assert_int_equal(f.params[1].kind, NOP_ARG_DOUBLE);
    assert_int_equal(f.params[2].kind, NOP_ARG_INT64);
    assert_int_equal(f.params[3].kind, NOP_ARG_SCALAR);
    assert_true(f.params[3].byref);

    /* repeated Tensors are substitutions */
    assert_true(nopi_cxx_read("_Z1fN5torch6TensorES0_S0_", &f));
    assert_int_equal(f.nparams, 3);
    assert_int_equal(f.params[2].kind, NOP_ARG_TENSOR);
    assert_true(nopi_cxx_read("_Z1fRKN5torch6TensorES2_", &f));
    assert_int_equal(f.nparams, 2);
    assert_true(f.params[1].byref);
}

static void other_types_are_not_op_kinds(void **state)
{
    (void)state;
    nopi_cxxfn f;
    assert_true(nopi_cxx_read("_Z11forward_cpuiiiN5torch6TensorE", &f));
    assert_int_equal(f.nparams, 4);
    assert_int_equal(f.params[0].kind, -1);
    assert_string_equal(f.display, "forward_cpu(int, int, int, torch::Tensor)");
    /* a non-const reference is not an op parameter */
    assert_true(nopi_cxx_read("_Z1fRN5torch6TensorE", &f));
    assert_int_equal(f.params[0].kind, -1);
    assert_true(nopi_cxx_read("_Z1fPf", &f));
    assert_int_equal(f.params[0].kind, -1);
    /* namespaces: the function's name is the last component, not a substitution */
    assert_true(nopi_cxx_read("_ZN2ns4reluEN5torch6TensorE", &f));
    assert_string_equal(f.name, "relu");
    assert_string_equal(f.qual, "ns::relu");
    assert_int_equal(f.params[0].kind, NOP_ARG_TENSOR);
    assert_true(nopi_cxx_read("_ZL5start", &f));   /* a static variable */
    assert_string_equal(f.name, "start");
    assert_true(nopi_cxx_read("_Z1gv", &f));
    assert_int_equal(f.nparams, 0);
    /* C names pass through; templates are not misread */
    assert_true(nopi_cxx_read("relu", &f));
    assert_false(f.cxx);
    assert_string_equal(f.name, "relu");
    assert_true(nopi_cxx_read("_Z1fIiEvT_", &f));
    assert_int_equal(f.nparams, -1);
    /* an operator's name is no source name: unread, with no name (it was the stack's
     * leftovers, which made a build diagnostic's line and column come and go) */
    memset(&f, 'x', sizeof f);
    assert_false(nopi_cxx_read("_Znwm", &f));
    assert_string_equal(f.name, "");
}

static void writes_signatures(void **state)
{
    (void)state;
    char buf[200];
    int kinds[] = { NOP_ARG_TENSOR, NOP_ARG_INT64 };
    bool byref[] = { true, false };
    nopi_cxx_signature("k", 2, kinds, byref, buf, sizeof buf);
    assert_string_equal(buf, "k(const torch::Tensor &, int64_t)");
}

/* Writes a user source and a compiler log in a fresh folder (the log's "%s" is the folder),
 * and reads the log with /inc as neuronop's include folder. */
static int read_log(const char *source, const char *log_format, nop_error *err)
{
    const char *dir = unit_tmpdir();
    unit_write(dir, "user.cpp", source);
    char text[2048];
    snprintf(text, sizeof text, log_format, dir, dir);
    unit_write(dir, "log", text);
    char *log = nopi_path_join(dir, "log");
    memset(err, 0, sizeof *err);
    int rc = nopi_gcc_log(log, "/inc", "compiling", NULL, NULL, err);
    free(log);
    return rc;
}

static void moves_header_errors_to_the_user_line(void **state)
{
    (void)state;
    nop_error err;
    assert_int_equal(read_log("int a;\nint b;\n",
                              "In file included from %s/user.cpp:1:\n"
                              "/inc/torchneuron/register.h: In instantiation of 'struct "
                              "torch::neuron_detail::param<float>':\n"
                              "%s/user.cpp:2:5:   required from here\n"
                              "/inc/torchneuron/register.h:40:7: error: static assertion "
                              "failed: doubles\n"
                              "/inc/torchneuron/register.h:40:7: note: noise\n", &err), -1);
    assert_int_equal(err.kind, NOP_ERR_COMPILE);
    assert_int_equal(err.diag.line, 2);
    assert_int_equal(err.diag.col, 5);
    assert_string_equal(err.diag.msg, "static assertion failed: doubles");
    assert_non_null(strstr(err.diag.detail, "the parameter type is 'float'"));
    assert_non_null(strstr(err.diag.detail, "reported in torchneuron/register.h:40"));
    assert_non_null(strstr(err.diag.detail, "    2 | int b;"));
}

static void system_header_errors_move_too(void **state)
{
    (void)state;
    nop_error err;
    assert_int_equal(read_log("a\nb\nc\n",
                              "/usr/include/c++/12/bits/x.h: In instantiation of 'void f()':\n"
                              "%s/user.cpp:3:7:   required from here\n%.0s"
                              "/usr/include/c++/12/bits/x.h:9:3: error: static assertion "
                              "failed: no\n", &err), -1);
    assert_int_equal(err.diag.line, 3);
    assert_int_equal(err.diag.col, 7);
    assert_non_null(strstr(err.diag.detail, "reported in /usr/include/c++/12/bits/x.h:9"));
}

static void a_clean_log_is_no_error(void **state)
{
    (void)state;
    const char *dir = unit_tmpdir();
    unit_write(dir, "log", "");
    char *log = nopi_path_join(dir, "log");
    nop_error err = { 0 };
    assert_int_equal(nopi_gcc_log(log, "/inc", "compiling", NULL, NULL, &err), 0);
    assert_int_equal(err.kind, NOP_ERR_NONE);
    free(log);
}

/* g++'s words about names the device's torch lacks become the device's; others stay. */
static void rewords_torch_errors(void **state)
{
    (void)state;
    char msg[512], hint[300];
    strcpy(msg, "'exps' is not a member of 'torch'; did you mean 'exp'?");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::exps' is not in the device's torch subset; did you mean "
                        "'exp'?");
    assert_string_equal(hint, "neuronop-cxx(3) lists the torch API the device has");

    /* gcc's own suggestion may name what the device lacks: only the subset is suggested */
    strcpy(msg, "'sigmoid_' is not a member of 'torch'; did you mean 'sigmoid'?");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::sigmoid_' is not in the device's torch subset");

    strcpy(msg, "'const class torch::Tensor' has no member named 'numell'; did you mean 'numel'?");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::Tensor::numell' is not in the device's torch subset; "
                        "did you mean 'numel'?");

    strcpy(msg, "'kDouble' is not a member of 'torch'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_non_null(strstr(hint, "kFloat, kBFloat16"));

    strcpy(msg, "static assertion failed: 'torch::mm' is not in the device's torch subset (x)");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::mm' is not in the device's torch subset (x)");

    strcpy(msg, "'undeclared' was not declared in this scope");
    assert_false(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'undeclared' was not declared in this scope");
    assert_string_equal(hint, "");
    strcpy(msg, "expected constructor, destructor, or type conversion before '(' token");
    assert_true(nopi_cxx_reword(msg, sizeof msg, "TORCH_LIBRARY(my_ops, m) {", hint,
                                sizeof hint));
    assert_non_null(strstr(hint, "not with TORCH_LIBRARY"));
    strcpy(msg, "'foo' is not a member of 'std'");
    assert_false(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));

    /* libtorch's idioms the device's API does not take, in g++ 12's words */
    strcpy(msg, "no match for 'operator[]' in 't_in[0]' (operand types are 'const "
           "torch::Tensor' and 'int')");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "indexing a tensor (torch::Tensor::operator[]) is not in the "
                        "device's torch subset");
    assert_non_null(strstr(hint, "t.accessor<float, 2>()"));
    strcpy(msg, "no match for 'operator[]' in 'v[0]' (operand types are 'Foo' and 'int')");
    assert_false(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    strcpy(msg, "too few arguments to function 'torch::Tensor torch::zeros(IntArrayRef, "
           "c10::TensorOptions)'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_non_null(strstr(hint, "torch::zeros({2, 3}, torch::kFloat)"));
    strcpy(msg, "too few arguments to function 'torch::Tensor torch::eye(int64_t, int64_t, "
           "c10::TensorOptions)'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_non_null(strstr(hint, "torch::eye(n, m, torch::kFloat)"));
    strcpy(msg, "'torch' does not name a type");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(hint, "#include <torch/torch.h> first, for the device's torch");
    strcpy(msg, "'cout' is not a member of 'std'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_non_null(strstr(hint, "printf()"));

    /* a read-only accessor given to a TensorAccessor<T, N>, as libtorch would take it */
    strcpy(msg, "could not convert 'x.TensorAccessor<float, 2> (read-only)::operator[](i)' from "
           "'TensorAccessor<[...],[...],true>' to 'TensorAccessor<[...],[...],false>'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "a read-only accessor (of a const tensor, such as an op's input) "
                        "cannot become a writable torch::TensorAccessor<T, N>");
    assert_non_null(strstr(hint, "template <class A>"));

    /* torch's options other than the dtype */
    strcpy(msg, "'class c10::TensorOptions' has no member named 'requires_grad'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::TensorOptions::requires_grad' is not in the device's "
                        "torch subset");
    assert_non_null(strstr(hint, "dtype only"));

    /* at:: and c10:: hold the subset too, as in libtorch: their missing names are said alike */
    strcpy(msg, "'zero' is not a member of 'at'; did you mean 'zeros'?");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'at::zero' is not in the device's torch subset; did you mean "
                        "'zeros'?");
    strcpy(msg, "'kComplexFloat' is not a member of 'c10'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'c10::kComplexFloat' is not in the device's torch subset");
    assert_non_null(strstr(hint, "kFloat, kBFloat16"));

    /* a short name: two edits are most of it, so torch::neg is no misspelt torch::ones */
    strcpy(msg, "'neg' is not a member of 'torch'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::neg' is not in the device's torch subset");
    assert_string_equal(hint, "instead: negate with torch::mul(t, -1), or -x on each element");
    strcpy(msg, "'lgo' is not a member of 'torch'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::lgo' is not in the device's torch subset");
    strcpy(msg, "'lo' is not a member of 'torch'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'torch::lo' is not in the device's torch subset; did you mean "
                        "'log'?");

    strcpy(msg, "'TORCH_CHECK' was not declared in this scope");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'TORCH_CHECK' is not in the device's torch subset: it throws, "
                        "and the device's C++ runtime has no exceptions");
    assert_non_null(strstr(hint, "assert(cond)"));

    /* the header's accessor types are said as torch names them */
    strcpy(msg, "cannot convert 'torch::TensorAccessor<c10::BFloat16, 2, true>' to 'float'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "cannot convert 'TensorAccessor<c10::BFloat16, 2> (read-only)' "
                        "to 'float'");
    assert_non_null(strstr(hint, "one index per dimension"));
    strcpy(msg, "cannot bind non-const lvalue reference of type 'torch::TensorAccessor<float, 1, "
           "false>&' to an rvalue of type 'torch::TensorAccessor<float, 2, false>::index_type' "
           "{aka 'torch::TensorAccessor<float, 1, false>'}");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "cannot bind non-const lvalue reference of type 'TensorAccessor<"
                        "float, 1>&' to an rvalue of type 'TensorAccessor<float, 1>'");
    assert_non_null(strstr(hint, "auto row = a[i]"));
    strcpy(msg, "'class torch::TensorAccessor<float, 1, false>' has no member named 'stride'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "'TensorAccessor::stride' is not in the device's torch subset");
    strcpy(msg, "assignment of read-only location 'a.torch::TensorAccessor<float, 1, "
           "true>::operator[](0)'");
    assert_true(nopi_cxx_reword(msg, sizeof msg, NULL, hint, sizeof hint));
    assert_string_equal(msg, "an element of a read-only accessor cannot be assigned");
}

/* A device message for C++ code names the C++ calls, word by word; other words stay. */
static void device_messages_in_cxx_words(void **state)
{
    (void)state;
    char msg[512];
    strcpy(msg, "nt_tensor_to_tcm(offset=21, n=3): elements 21..23 are outside the tensor");
    nopi_cxx_words(msg, sizeof msg);
    assert_string_equal(msg, "tensor_to_tcm(offset=21, n=3): elements 21..23 are outside the "
                        "tensor");
    strcpy(msg, "nt_stream_write_bf16: the stream was already closed (call nt_stream_close)");
    nopi_cxx_words(msg, sizeof msg);
    assert_string_equal(msg, "write_stream_accessor<c10::BFloat16>().write(): the stream was "
                        "already closed (call close())");
    strcpy(msg, "nt_add_s_out: shapes differ; nt_zeros(NT_I8); my_nt_exp nt_frob NT_F32x");
    nopi_cxx_words(msg, sizeof msg);
    assert_string_equal(msg, "torch::add_out: shapes differ; torch::zeros(torch::kChar); "
                        "my_nt_exp nt_frob NT_F32x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_op_signatures),
        cmocka_unit_test(other_types_are_not_op_kinds),
        cmocka_unit_test(writes_signatures),
        cmocka_unit_test(moves_header_errors_to_the_user_line),
        cmocka_unit_test(system_header_errors_move_too),
        cmocka_unit_test(a_clean_log_is_no_error),
        cmocka_unit_test(rewords_torch_errors),
        cmocka_unit_test(device_messages_in_cxx_words),
    };
    return cmocka_run_group_tests_name("cxx", tests, NULL, NULL);
}
