/*
 * tensorlib_cxx kernels: whole-tensor operations from the device's tensor library instead of
 * element loops, and the three kinds of number an op can take - double, int64_t and
 * torch::Scalar (which holds either).
 *
 * Each step's form that returns a new tensor allocates it on the device for the rest of the
 * op; the last step uses the _out form to write straight into get_dst_tensor().  The unary
 * operations (exp, abs, log, ...) take a non-const torch::Tensor &, as the device's API
 * reference lists them: an input, a const torch::Tensor &, is passed through a non-const
 * handle - copying a Tensor copies one pointer, never the data.
 */
#include <stdint.h>
#include <torch/torch.h>

/* softclip(x, limit, alpha) = clamp(exp(x), 0, limit) + alpha * x */
torch::Tensor softclip(const torch::Tensor &x, double limit, const torch::Scalar &alpha)
{
    torch::Tensor t_out = get_dst_tensor();
    torch::Tensor x_handle = x;
    torch::Tensor e = torch::exp(x_handle);
    torch::Tensor clipped = torch::clamp(e, 0.0, limit);
    torch::add_out(t_out, clipped, x, alpha);     /* clipped + alpha * x, into the output */
    return t_out;
}

/* poly(x, exponent, scale, shift) = scale * x^exponent + shift */
torch::Tensor poly(const torch::Tensor &x, int64_t exponent, const torch::Scalar &scale,
                   double shift)
{
    torch::Tensor t_out = get_dst_tensor();
    torch::Tensor powered = torch::pow(x, exponent);           /* an int64 Scalar exponent */
    torch::Tensor scaled = torch::mul(powered, scale);
    torch::Tensor offset = torch::full(x.sizes(), shift, torch::kFloat);
    torch::add_out(t_out, scaled, offset);
    return t_out;
}
