/* tensorlib_cxx references for neuronop test: host code computing each element with <cmath>
 * in double precision, streaming the flattened tensors, instead of the tensor library the
 * kernels use. */
#include <cmath>
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor softclip_ref(const torch::Tensor &x, double limit, const torch::Scalar &alpha)
{
    torch::Tensor t_out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.read_stream_accessor<float>();
    auto out = t_out.write_stream_accessor<float>();
    for (int64_t i = 0; i < x.numel(); i++) {
        double v = in.read();
        double e = std::exp(v);
        double c = e < 0.0 ? 0.0 : (e > limit ? limit : e);
        out.write(static_cast<float>(c + alpha.toDouble() * v));
    }
    out.close();
    return t_out;
}

torch::Tensor poly_ref(const torch::Tensor &x, int64_t exponent, const torch::Scalar &scale,
                       double shift)
{
    torch::Tensor t_out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.read_stream_accessor<float>();
    auto out = t_out.write_stream_accessor<float>();
    for (int64_t i = 0; i < x.numel(); i++) {
        double v = in.read();
        double p = std::pow(v, static_cast<double>(exponent));
        out.write(static_cast<float>(scale.toDouble() * p + shift));
    }
    out.close();
    return t_out;
}
