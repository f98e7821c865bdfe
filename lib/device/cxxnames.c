/*
 * cxxnames.c - the device's messages in C++ terms for C++ code.
 *
 * torch/torch.h is a thin layer over the C API, so a C++ kernel's broken rule is found by the
 * same runtime code as a C kernel's, and that code words its message with the C call it
 * checks ("nt_tensor_to_tcm(offset=21, n=3): elements 21..23 are outside the tensor").  A
 * C++ author wrote tcm_accessor().tensor_to_tcm<float>(...) and never saw nt_tensor_to_tcm,
 * so before a message of C++ code reaches the caller, every C API name in it is replaced by
 * the C++ it comes from (neuronop-api(3) has the same table for people).  Which code is C++
 * is known from the library's own description: the sources of the role (compute, shape,
 * reference) the failing code has.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* C++ element type of a dtype suffix */
static const char *suffix_type(const char *sfx)
{
    static const char *const map[][2] = {
        { "f32", "float" }, { "bf16", "c10::BFloat16" }, { "f16", "c10::Half" },
        { "i32", "int32_t" }, { "i8", "int8_t" }, { "i64", "int64_t" }, { "i16", "int16_t" },
        { "u8", "uint8_t" },
    };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(map); i++)
        if (strcmp(sfx, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* Names with one fixed C++ spelling. */
static const char *const fixed[][2] = {
    { "nt_accessor_of", "accessor<T, N>()" }, { "nt_read_stream_of", "read_stream_accessor<T>()" },
    { "nt_write_stream_of", "write_stream_accessor<T>()" }, { "nt_stream_close", "close()" },
    { "nt_tcm_accessor_of", "tcm_accessor()" }, { "nt_tensor_to_tcm", "tensor_to_tcm" },
    { "nt_tcm_to_tensor", "tcm_to_tensor" }, { "nt_set_coherence", "set_accessor_coherence_policy" },
    { "nt_get_coherence", "get_accessor_coherence_policy" },
    { "NT_COHERENT", "CoherencyEnforcer::COHERENT" },
    { "NT_INCOHERENT_VERBOSE", "CoherencyEnforcer::INCOHERENT_VERBOSE" },
    { "NT_INCOHERENT_QUIET", "CoherencyEnforcer::INCOHERENT_QUIET" },
    { "nt_numel", "numel()" }, { "nt_dim", "dim()" }, { "nt_size", "size" },
    { "nt_sizes", "sizes()" }, { "nt_dtype_of", "scalar_type()" }, { "nt_fill_", "fill_" },
    { "nt_pow_t", "torch::pow" }, { "nt_pow_s", "torch::pow" }, { "nt_pow_t_out", "torch::pow_out" },
    { "nt_pow_s_out", "torch::pow_out" },
    { "NT_F32", "torch::kFloat" }, { "NT_BF16", "torch::kBFloat16" }, { "NT_F16", "torch::kHalf" },
    { "NT_I32", "torch::kInt" }, { "NT_I8", "torch::kChar" }, { "NT_I64", "torch::kLong" },
    { "NT_I16", "torch::kShort" }, { "NT_U8", "torch::kByte" },
};

/* The C++ spelling of C API name `w` into out; false when w has none (it stays). */
static bool cxx_spelling(const char *w, char *out, size_t size)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(fixed); i++) {
        if (strcmp(w, fixed[i][0]) == 0) {
            snprintf(out, size, "%s", fixed[i][1]);
            return true;
        }
    }
    static const char *const typed[][2] = {
        { "nt_get_", "accessor<%s, N>()[...]" }, { "nt_set_", "accessor<%s, N>()[...] = v" },
        { "nt_stream_read_", "read_stream_accessor<%s>().read()" },
        { "nt_stream_write_", "write_stream_accessor<%s>().write()" },
    };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(typed); i++) {
        size_t n = strlen(typed[i][0]);
        const char *t = strncmp(w, typed[i][0], n) == 0 ? suffix_type(w + n) : NULL;
        if (t) {
            snprintf(out, size, typed[i][1], t);
            return true;
        }
    }
    /* the tensor library: nt_exp -> torch::exp, nt_add_s_out -> torch::add_out */
    static const char *const ops[] = {
        "empty", "zeros", "ones", "full", "eye", "abs", "ceil", "floor", "sin", "cos", "tan",
        "log", "log2", "log10", "exp", "pow", "clamp", "add", "sub", "mul", "div",
        "bitwise_and", "bitwise_or", "bitwise_not",
    };
    if (strncmp(w, "nt_", 3) != 0)
        return false;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(ops); i++) {
        size_t n = strlen(ops[i]);
        const char *rest = w + 3 + n;
        if (strncmp(w + 3, ops[i], n) != 0)
            continue;
        bool out_form = strcmp(rest, "_out") == 0 || strcmp(rest, "_s_out") == 0;
        if (!*rest || strcmp(rest, "_s") == 0 || out_form) {
            snprintf(out, size, "torch::%s%s", ops[i], out_form ? "_out" : "");
            return true;
        }
    }
    return false;
}

void nopi_cxx_words(char *msg, size_t size)
{
    char *out = malloc(size);
    if (!out)
        return;   /* the message stays in C's words */
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < size;) {
        bool start = p == msg || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        size_t n = 0;
        while (isalnum((unsigned char)p[n]) || p[n] == '_')
            n++;
        char word[64], cxx[96];
        if (start && n > 3 && n < sizeof word && (strncmp(p, "nt_", 3) == 0 ||
                                                   strncmp(p, "NT_", 3) == 0)) {
            memcpy(word, p, n);
            word[n] = '\0';
            if (cxx_spelling(word, cxx, sizeof cxx)) {
                o += (size_t)snprintf(out + o, size - o, "%s", cxx);
                if (o >= size)
                    o = size - 1;
                p += n;
                continue;
            }
        }
        size_t k = n ? n : 1;
        if (o + k >= size)
            k = size - 1 - o;
        memcpy(out + o, p, k);
        o += k;
        p += n ? n : 1;
    }
    out[o] = '\0';
    memcpy(msg, out, o + 1);
    free(out);
}

/* True when every source of `role` in the library is C++ (.cpp, .cc, .cxx). */
static bool role_is_cxx(const nop_library *lib, const char *role)
{
    const nt__lib_desc *d = lib ? lib->desc : NULL;
    int n = 0;
    for (int i = 0; d && i < d->nsources; i++) {
        if (strcmp(d->sources[i].role, role) != 0)
            continue;
        if (!nopi_is_cxx_source(d->sources[i].path))
            return false;
        n++;
    }
    return n > 0;
}

bool nopi_core_is_cxx(const nopi_core *c)
{
    const char *role = c->shape_mode ? "shape" : c->run->ref_name ? "reference" : "compute";
    return role_is_cxx(c->run->lib, role);
}

void nopi_core_diag_words(const nopi_core *c, nop_diag *d)
{
    if (!nopi_core_is_cxx(c))
        return;
    nopi_cxx_words(d->msg, sizeof d->msg);
    nopi_cxx_words(d->detail, sizeof d->detail);
}
