/* Kernels that each exercise one part of torch/torch.h, for tests/e2e/t0122-run-cxx-api.sh:
 * the values they produce are checked there. */
#include <torch/torch.h>

// printf takes a writable accessor's element as its value (it is a handle, not a float)
torch::Tensor print_elements(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    auto in = t.accessor<float, 1>();
    for (int64_t i = 0; i < t.numel(); i++)
        o[i] = in[i] * 2;
    printf("in %g out %g\n", in[1], o[1]);
    o[0] += 10;
    o[1] -= in[1];
    printf("after %g %g\n", o[0], o[1]);
    return out;
}

// a[i][j] on a 3-D tensor, counted in row-major order
torch::Tensor index_3d(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 3>();
    float k = 0;
    for (int64_t i = 0; i < t.size(0); i++)
        for (int64_t j = 0; j < t.size(1); j++)
            for (int64_t l = 0; l < t.size(-1); l++)
                o[i][j][l] = k++;
    return out;
}

// a write stream flushes when it goes out of scope, without close()
torch::Tensor stream_scope(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    {
        auto r = t.read_stream_accessor<float>();
        auto w = out.write_stream_accessor<float>();
        for (int64_t i = 0; i < t.numel(); i++)
            w.write(r.read() + 1);
    }
    return out;
}

// the tensor library: factories, fill_, Scalar arguments, _out forms, sizes() ==
torch::Tensor tensorlib(const torch::Tensor &t, double d, int64_t k, const torch::Scalar &s)
{
    torch::Tensor out = get_dst_tensor();
    torch::Tensor a = torch::full(t.sizes(), d, torch::kFloat);       // d
    torch::Tensor b = torch::ones({static_cast<size_t>(t.numel())}, torch::kFloat);
    b.fill_(k);                                                          // k
    torch::Tensor c = torch::add(a, b, s);                               // d + s * k
    torch::Tensor e = torch::eye(2, 2, torch::TensorOptions().dtype(torch::kFloat));
    if (!(a.sizes() == t.sizes()) || e.sizes() == t.sizes() || e.dim() != 2)
        abort();
    torch::mul_out(out, c, t);                                           // (d + s * k) * t
    return out;
}

// bf16 elements through the standard and the TCM accessor
torch::Tensor bf16_halve(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<c10::BFloat16, 1>();
    auto o = out.accessor<c10::BFloat16, 1>();
    for (int64_t i = 0; i < t.numel(); i++)
        o[i] = static_cast<float>(in[i]) / 2;
    return out;
}

// the coherence policy reads back what was set; INCOHERENT_QUIET allows mixing
torch::Tensor coherence(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    if (t.get_accessor_coherence_policy() != torch::CoherencyEnforcer::COHERENT)
        abort();
    t.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_QUIET);
    if (t.get_accessor_coherence_policy() != torch::CoherencyEnforcer::Policy::INCOHERENT_QUIET)
        abort();
    auto r = t.read_stream_accessor<float>();
    auto a = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.numel(); i++)
        o[i] = r.read() + a[i];
    r.close();
    return out;
}
