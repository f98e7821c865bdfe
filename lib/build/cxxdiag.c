/*
 * cxxdiag.c - g++'s messages about the torch API, said in the device's terms.
 *
 * The device's torch is a subset of torch: a kernel ported from host torch code calls what
 * the device lacks (torch::sigmoid, t.view(), torch::kDouble), and g++ answers "'x' is not a
 * member of 'torch'", with a suggestion that may itself name something the device lacks.
 * This file turns those messages into "'torch::x' is not in the device's torch subset", with
 * a suggestion only from what the subset has (its list is here: torch_names, tensor_members).
 * It also explains the errors the API's own design causes - read-only accessors, unary
 * operations taking Tensor &, temporaries - and says why exceptions, RTTI and torch's
 * throwing checks (TORCH_CHECK) do not compile, where g++ would suggest flags neuronop does
 * not let through.  syscc.c calls it on each error in a C++ source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscc.h"

/* What the device's torch has, for "did you mean" (torch/torch.h is the source). */
static const char *const torch_names[] = {
    "Tensor", "Scalar", "IntArrayRef", "TensorOptions", "ScalarType", "Dtype", "dtype",
    "TensorAccessor", "TensorReadStreamAccessor", "TensorWriteStreamAccessor",
    "TensorTcmAccessor", "CoherencyEnforcer", "neuron", "Library",
    "kFloat", "kFloat32", "kBFloat16", "kHalf", "kFloat16", "kInt", "kInt32", "kChar", "kInt8",
    "kLong", "kInt64", "kShort", "kInt16", "kByte", "kUInt8",
    "empty", "zeros", "ones", "full", "eye",
    "abs", "ceil", "floor", "sin", "cos", "tan", "log", "log2", "log10", "exp",
    "abs_out", "ceil_out", "floor_out", "sin_out", "cos_out", "tan_out", "log_out", "log2_out",
    "log10_out", "exp_out", "pow", "pow_out", "clamp", "clamp_out", "add", "add_out", "sub",
    "sub_out", "mul", "mul_out", "div", "div_out", "bitwise_and", "bitwise_and_out",
    "bitwise_or", "bitwise_or_out", "bitwise_not", "bitwise_not_out", "promote_types",
};
/* ... of it in c10:: (at:: has these and torch_names' ATen functions, as in libtorch) */
static const char *const c10_names[] = {
    "ScalarType", "TensorOptions", "Scalar", "IntArrayRef", "BFloat16", "Half", "toString",
    "elementSize", "isFloatingType", "isIntegralType", "isComplexType", "promoteTypes",
    "nullopt",
    "kFloat", "kBFloat16", "kHalf", "kInt", "kChar", "kLong", "kShort", "kByte",
};
static const char *const tensor_members[] = {
    "defined", "numel", "dim", "ndimension", "size", "sizes", "scalar_type", "dtype",
    "accessor", "read_stream_accessor", "write_stream_accessor", "tcm_accessor",
    "get_accessor_coherence_policy", "set_accessor_coherence_policy", "fill_",
};

/* Copies the name between the first pair of quotes of s into buf; false if there is none. */
static bool quoted(const char *s, char *buf, size_t size)
{
    const char *a = strchr(s, '\'');
    const char *b = a ? strchr(a + 1, '\'') : NULL;
    if (!b || (size_t)(b - a - 1) >= size)
        return false;
    memcpy(buf, a + 1, (size_t)(b - a - 1));
    buf[b - a - 1] = '\0';
    return true;
}

/* torch functions the subset lacks that have a plain replacement in it */
static const char *const instead[][2] = {
    { "rsub", "torch::sub(other, t, alpha), its operands swapped: rsub(t, other, alpha) is "
              "other - alpha * t" },
    { "neg", "negate with torch::mul(t, -1), or -x on each element" },
    { "relu", "torch::clamp(t, 0, FLT_MAX), or x > 0 ? x : 0 on each element" },
    { "square", "torch::mul(t, t)" },
    { "sqrt", "torch::pow(t, 0.5)" },
    { "zeros_like", "torch::zeros(t.sizes(), t.scalar_type())" },
    { "empty_like", "torch::empty(t.sizes(), t.scalar_type())" },
    { "ones_like", "torch::ones(t.sizes(), t.scalar_type())" },
};

/* Real torch functions a name or two from one the subset has: a kernel that uses one
 * meant it, and "did you mean" the near one would change what it computes (a C++ idioms
 * tester followed 'rsub': did you mean 'sub', and the sign flipped). */
static const char *const other_torch[] = {
    "sum", "sinh", "asin", "sign", "sinc", "cosh", "acos", "tanh", "atan", "exp2", "addr",
    "fill", "clamp_", "floor_", "ceil_", "zero_", "abs_", "exp_", "log_", "sin_", "cos_",
    "tan_", "fill_", "eq", "logit", "prod",
};

static bool other_torch_name(const char *name)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(other_torch); i++)
        if (strcmp(name, other_torch[i]) == 0)
            return true;
    return false;
}

static const char *replacement(const char *name)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(instead); i++)
        if (strcmp(name, instead[i][0]) == 0)
            return instead[i][1];
    return NULL;
}

static void not_in_subset(char *msg, size_t size, const char *scope, const char *name,
                          const char *const *have, size_t nhave)
{
    /* only a near miss: torch::matmul is not a misspelt torch::mul, whatever the distance,
     * and in a short name two edits are most of it (torch::neg is not torch::ones) */
    const char *near = replacement(name) || other_torch_name(name)
                           ? NULL : nop_closest(name, have, nhave);
    if (near && nopi_edit_distance(name, near) > (strlen(name) < 6 ? 1 : 2))
        near = NULL;
    snprintf(msg, size, "'%s%s' is not in the device's torch subset%s%s%s", scope, name,
             near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

/* g++ names an accessor as accessors.h spells it, 'torch::TensorAccessor<T, N, RO>'; torch
 * calls it TensorAccessor<T, N>: say it so in msg, in place, with "(read-only)" for one
 * from a const tensor.  Returns true when it named one. */
static bool torch_accessor_names(char *msg, size_t size)
{
    static const char acc[] = "torch::TensorAccessor<";
    bool named = false;
    char out[1024];
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < sizeof out;) {
        const char *args = p + sizeof acc - 1;
        const char *end = strncmp(p, acc, sizeof acc - 1) == 0 ? strchr(args, '>') : NULL;
        char t[128];
        if (end && (size_t)(end - args) < sizeof t) {
            memcpy(t, args, (size_t)(end - args));
            t[end - args] = '\0';
            /* T, N, RO: the element type is all before the last two commas */
            char *ro = strrchr(t, ','), *n = NULL;
            if (ro) {
                *ro = '\0';
                n = strrchr(t, ',');
            }
            if (n) {
                *n = '\0';
                int k = snprintf(out + o, sizeof out - o, "TensorAccessor<%s,%s>%s", t, n + 1,
                                 strstr(ro + 1, "true") ? " (read-only)" : "");
                if (k < 0 || (size_t)k >= sizeof out - o)
                    break;
                o += (size_t)k;
                named = true;
                p = end + 1;
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
    if (!named)
        return false;
    /* a row's type is written TensorAccessor<T, N>::index_type: g++ says "'...::index_type'
     * {aka 'TensorAccessor<T, N - 1>'}"; only the second is torch's name */
    static const char aka[] = "::index_type' {aka '";
    char *x;
    while ((x = strstr(out, aka)) != NULL) {
        char *open = x;
        while (open > out && *open != '\'')
            open--;
        char *y = x + sizeof aka - 1, *close = strstr(y, "'}");
        if (*open != '\'' || !close)
            break;
        char joined[sizeof out];
        snprintf(joined, sizeof joined, "%.*s%.*s%s", (int)(open + 1 - out), out,
                 (int)(close + 1 - y), y, close + 2);
        memcpy(out, joined, strlen(joined) + 1);
    }
    snprintf(msg, size, "%s", out);
    return true;
}

/* The detail line under "'X' is not in the device's torch subset": what to use instead
 * (use, or NULL when there is nothing), else the dtypes the device has for a dtype's name,
 * else where the API is listed. */
static void subset_hint(char *hint, size_t size, const char *name, const char *use)
{
    bool dtype = name[0] == 'k' && name[1] >= 'A' && name[1] <= 'Z';
    if (use)
        snprintf(hint, size, "instead: %s", use);
    else
        snprintf(hint, size, "%s", dtype ? "the device's dtypes are kFloat, kBFloat16, kHalf, "
                 "kInt, kChar, kLong, kShort and kByte (no float64)"
                 : "neuronop-cxx(3) lists the torch API the device has");
}

bool nopi_cxx_reword(char *msg, size_t size, const char *source, char *hint, size_t hint_size)
{
    static const char assert_prefix[] = "static assertion failed: ";
    static const char subset[] = "is not in the device's torch subset";
    char name[200];
    hint[0] = '\0';
    /* a read-only accessor (of a const tensor: an op's input) given to a TensorAccessor<T, N>
     * variable or parameter: libtorch's TensorAccessor<T, N> takes it, the device's (and
     * accessors.h's) TensorAccessor<T, N, read_only> does not; g++ elides the T and N */
    if (strstr(msg, "from 'TensorAccessor<[...],[...],true>' to") &&
        strstr(msg, "'TensorAccessor<[...],[...],false>'")) {
        snprintf(msg, size, "a read-only accessor (of a const tensor, such as an op's input) "
                 "cannot become a writable torch::TensorAccessor<T, N>");
        snprintf(hint, hint_size, "on the device an accessor is TensorAccessor<T, N, read_only> "
                 "(libtorch's TensorAccessor<T, N> would take it): hold it with auto, or make "
                 "the helper that takes it a template, template <class A> float f(A a)");
        return true;
    }
    /* a row of an accessor used as an element, or bound to a T & (torch refuses both too) */
    if (torch_accessor_names(msg, size)) {
        /* a read-only one given to a template over the element type, TensorAccessor<T, N>,
         * which deduces nothing from it (an idioms tester's find: g++'s words alone) */
        if (strncmp(msg, "no matching function for call to '", 34) == 0 &&
            strstr(msg, " (read-only)")) {
            snprintf(hint, hint_size, "on the device an accessor of a const tensor, such as "
                     "an op's input, is a read-only one, TensorAccessor<T, N, true>: a helper "
                     "that takes any accessor, template <class A> f(A a), compiles here and "
                     "against libtorch");
            return true;
        }
        if (strstr(msg, "cannot bind non-const lvalue reference of type 'TensorAccessor<")) {
            snprintf(hint, hint_size, "a[i] of a multi-dimensional accessor is a row, a "
                     "temporary (as in torch): keep it with auto row = a[i], or index on to an "
                     "element, a[i][j]");
            return true;
        }
        if (strstr(msg, "cannot convert 'TensorAccessor<") ||
            (strncmp(msg, "no match for 'operator", 22) == 0 &&
             strstr(msg, "(operand types are 'TensorAccessor<"))) {
            snprintf(hint, hint_size, "a[i] of a multi-dimensional accessor is a row, not an "
                     "element: give one index per dimension, a[i][j]");
            return true;
        }
    }
    if (strstr(msg, "class TensorAccessor<") && strstr(msg, "' has no member named '") &&
        quoted(strstr(msg, "named '") + 6, name, sizeof name)) {
        snprintf(msg, size, "'TensorAccessor::%s' is not in the device's torch subset", name);
        snprintf(hint, hint_size, "an accessor has a[i]...[k] (one index per dimension) and "
                 "size(dim); for raw data, copy a block with tcm_accessor().tensor_to_tcm");
        return true;
    }
    if (strncmp(msg, assert_prefix, sizeof assert_prefix - 1) == 0 && strstr(msg, subset)) {
        memmove(msg, msg + sizeof assert_prefix - 1, strlen(msg) - (sizeof assert_prefix - 2));
        if (strncmp(msg, "'AT_DISPATCH_", 13) == 0)   /* torch/detail/unported.h's */
            snprintf(hint, hint_size, "its other dtypes throw, and the device's C++ runtime "
                     "has no exceptions: write the kernel for the dtype it takes (scalar_t is "
                     "float for kFloat), or switch on t.scalar_type() with an assert(false) "
                     "in its default");
        return true;
    }
    const char *p = strstr(msg, "' is not a member of 'torch");
    if (p && quoted(msg, name, sizeof name) && !strchr(name, ':')) {
        bool neuron = strncmp(p, "' is not a member of 'torch::neuron'", 36) == 0;
        bool top = strncmp(p, "' is not a member of 'torch'", 28) == 0;
        if (top || neuron) {
            not_in_subset(msg, size, neuron ? "torch::neuron::" : "torch::", name,
                          torch_names, NOPI_ARRAY_LEN(torch_names));
            subset_hint(hint, hint_size, name, neuron ? NULL : replacement(name));
            return true;
        }
    }
    /* at:: and c10:: are torch's too (libtorch's torch:: has all of at::, at:: all of c10::) */
    bool at = p == NULL && (p = strstr(msg, "' is not a member of 'at'")) != NULL;
    bool c10 = p == NULL && (p = strstr(msg, "' is not a member of 'c10'")) != NULL;
    if ((at || c10) && quoted(msg, name, sizeof name) && !strchr(name, ':')) {
        const char *const *have = c10 ? c10_names : torch_names;
        size_t nhave = c10 ? NOPI_ARRAY_LEN(c10_names) : NOPI_ARRAY_LEN(torch_names);
        not_in_subset(msg, size, c10 ? "c10::" : "at::", name, have, nhave);
        subset_hint(hint, hint_size, name, at ? replacement(name) : NULL);
        return true;
    }
    /* torch's other options (device, layout, requires_grad ...): the device's have a dtype */
    if ((p = strstr(msg, "c10::TensorOptions' has no member named '")) != NULL &&
        quoted(strstr(p, "named '") + 6, name, sizeof name)) {
        snprintf(msg, size, "'torch::TensorOptions::%s' is not in the device's torch subset",
                 name);
        snprintf(hint, hint_size, "a factory's options have a dtype only, as on the device: "
                 "torch::TensorOptions().dtype(torch::kFloat), or torch::kFloat itself");
        return true;
    }
    if ((p = strstr(msg, "torch::Tensor' has no member named '")) != NULL &&
        quoted(strstr(p, "named '") + 6, name, sizeof name)) {
        not_in_subset(msg, size, "torch::Tensor::", name, tensor_members,
                      NOPI_ARRAY_LEN(tensor_members));
        snprintf(hint, hint_size, "neuronop-cxx(3) lists the torch API the device has");
        return true;
    }
    static const char nomatch[] = "no matching function for call to 'torch::";
    if (strncmp(msg, nomatch, sizeof nomatch - 1) == 0) {
        /* a name the subset lacks called with a braced list: no template can take that */
        const char *q = msg + sizeof nomatch - 1;
        bool member = strncmp(q, "Tensor::", 8) == 0;
        q += member ? 8 : 0;
        size_t n = strcspn(q, "(<'");
        if (n && n < sizeof name) {
            memcpy(name, q, n);
            name[n] = '\0';
            bool known = false;
            const char *const *have = member ? tensor_members : torch_names;
            size_t nhave = member ? NOPI_ARRAY_LEN(tensor_members) : NOPI_ARRAY_LEN(torch_names);
            for (size_t i = 0; i < nhave && !known; i++)
                known = strcmp(name, have[i]) == 0;
            if (!known) {
                not_in_subset(msg, size, member ? "torch::Tensor::" : "torch::", name, have,
                              nhave);
                snprintf(hint, hint_size, "neuronop-cxx(3) lists the torch API the device has");
                return true;
            }
            if (member && strcmp(name, "write_stream_accessor") == 0 && strstr(q, ") const'")) {
                snprintf(hint, hint_size, "the tensor is const, such as an op's input: it "
                         "cannot be written; write to the output, from get_dst_tensor()");
                return true;
            }
        }
    }
    if (strncmp(msg, "expected constructor, destructor, or type conversion before", 59) == 0 &&
        source && (strstr(source, "NEURON_LIBRARY") || strstr(source, "TORCH_LIBRARY"))) {
        if (strstr(source, "TORCH_LIBRARY"))
            snprintf(hint, hint_size, "the device registers ops with NEURON_LIBRARY(ns, m) and "
                     "m.def(op, &shape_fn, \"kernel_fn\"), from <torchneuron/register.h>, not "
                     "with TORCH_LIBRARY");
        else
            snprintf(hint, hint_size, "NEURON_LIBRARY is not defined here: #include "
                     "<torchneuron/register.h>");
        return true;
    }
    /* torch's checking macros throw c10::Error; the device's API has none of them */
    static const char *const checks[] = { "TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "AT_ASSERT",
                                          "AT_ERROR", "TORCH_WARN" };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(checks); i++) {
        if (quoted(msg, name, sizeof name) && strncmp(name, checks[i], strlen(checks[i])) == 0 &&
            strstr(msg, "' was not declared in this scope")) {
            snprintf(msg, size, "'%s' is not in the device's torch subset: it throws, and the "
                     "device's C++ runtime has no exceptions", name);
            snprintf(hint, hint_size, "check with assert(cond), which stops the core and reports "
                     "the condition with its file and line (or abort())");
            return true;
        }
    }
    /* libtorch's code the device's API does not take (a C++ idioms tester's finds: g++'s
     * words alone) */
    if (strncmp(msg, "no match for 'operator[]' in '", 30) == 0 &&
        (strstr(msg, "(operand types are 'torch::Tensor'") ||
         strstr(msg, "(operand types are 'const torch::Tensor'"))) {
        snprintf(msg, size, "indexing a tensor (torch::Tensor::operator[]) is not in the "
                 "device's torch subset");
        snprintf(hint, hint_size, "reach its elements through an accessor: auto a = "
                 "t.accessor<float, 2>(); a[i][j]");
        return true;
    }
    static const char *const factories[] = { "empty", "zeros", "ones", "full", "eye" };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(factories); i++) {
        char fn[64];
        snprintf(fn, sizeof fn, " torch::%s(", factories[i]);
        if (strncmp(msg, "too few arguments to function 'torch::Tensor", 44) == 0 &&
            strstr(msg, fn)) {
            snprintf(hint, hint_size, "the device's factories take their options, a dtype at "
                     "least, as its API reference lists them: torch::%s(%s, torch::kFloat)",
                     factories[i], strcmp(factories[i], "eye") == 0 ? "n, m"
                                   : strcmp(factories[i], "full") == 0 ? "{2, 3}, value"
                                                                        : "{2, 3}");
            return true;
        }
    }
    if (strcmp(msg, "'torch' does not name a type") == 0 ||
        strcmp(msg, "'torch' has not been declared") == 0) {   /* (a new user's find) */
        snprintf(hint, hint_size, "#include <torch/torch.h> first, for the device's torch");
        return true;
    }
    if (strcmp(msg, "'cout' is not a member of 'std'") == 0 ||
        strcmp(msg, "'cerr' is not a member of 'std'") == 0) {
        snprintf(hint, hint_size, "the device prints with printf(), whose output appears after "
                 "the op; <iostream> has a static initialiser, which the device does not run");
        return true;
    }
    if (strncmp(msg, "exception handling disabled", 27) == 0) {
        snprintf(msg, size, "the device's C++ runtime has no exceptions: kernels and shape "
                 "functions cannot throw or catch");
        snprintf(hint, hint_size, "report a broken rule with assert() or abort(), which the "
                 "device stops the core for (neuronop-cxx(3))");
        return true;
    }
    if (strstr(msg, "with '-fno-rtti'")) {
        snprintf(msg, size, "the device's C++ runtime has no RTTI: typeid and dynamic_cast "
                 "do not compile there");
        return true;
    }
    /* a read-only accessor's element is a const T & (accessors.h): written to, g++ names
     * the accessor's internals, or a 16-bit float's assignment operator */
    bool ro_elem = strncmp(msg, "assignment of read-only location '", 34) == 0 &&
                   strstr(msg, "TensorAccessor<") && strstr(msg, "::operator[](");
    bool ro_f16 = (strstr(msg, "passing 'const c10::BFloat16' as 'this' argument") ||
                   strstr(msg, "passing 'const c10::Half' as 'this' argument")) &&
                  strstr(msg, "discards qualifiers");
    bool ro_f16_compound = strncmp(msg, "no match for 'operator", 22) == 0 &&
                           strstr(msg, "=' (operand types are 'const c10::");
    if (ro_elem && !strstr(msg, " (read-only)")) {   /* a writable one, made const */
        snprintf(msg, size, "an element of a const accessor cannot be assigned");
        snprintf(hint, hint_size, "a const accessor, a const reference to one or a copy a "
                 "lambda captured gives const elements, as torch's does; write through one "
                 "that is not const: auto a = out.accessor<T, N>();");
        return true;
    }
    if (ro_elem || ro_f16 || ro_f16_compound) {
        snprintf(msg, size, "an element of a read-only accessor cannot be assigned");
        /* (g++ does not say which of a 16-bit float's accessor it is: both are said) */
        snprintf(hint, hint_size, "accessors of a const tensor, such as an op's inputs, or of "
                 "a temporary are read-only (as on the device); write to a named tensor: "
                 "torch::Tensor out = get_dst_tensor();%s", ro_elem ? "" : " or, if the "
                 "accessor is itself const (const auto, a const reference, a copy a lambda "
                 "captured), through one that is not");
        return true;
    }
    if (strcmp(msg, "lvalue required as left operand of assignment") == 0) {
        snprintf(hint, hint_size, "if the left operand is an accessor's element: accessors of "
                 "a const tensor, such as an op's inputs, or of a temporary, such as "
                 "get_dst_tensor().accessor<T, N>(), are read-only (as on the device)");
        return true;
    }
    if (strcmp(msg, "cannot convert 'torch::Tensor' to 'torch::Tensor&'") == 0 ||
        strstr(msg, "cannot bind non-const lvalue reference of type 'torch::Tensor&' to an "
               "rvalue")) {
        snprintf(hint, hint_size, "a temporary tensor (a factory's or an operation's result, "
                 "get_dst_tensor()) binds to no torch::Tensor &: not to write_stream_accessor, "
                 "nor to a unary operation, as on the device; name it first: torch::Tensor "
                 "x = ...;");
        return true;
    }
    if (strstr(msg, "binding reference of type 'torch::Tensor&' to 'const torch::Tensor' "
               "discards qualifiers")) {
        snprintf(hint, hint_size, "the device's unary operations (abs ... exp, and their _out "
                 "forms) take a non-const torch::Tensor &, as its API reference lists them; "
                 "pass a non-const copy (a Tensor is a handle: copying it copies no data)");
        return true;
    }
    return false;
}
