/*
 * relu_multicore_cxx kernel: relu on every GPSIMD core (multicore: true).  Every core runs
 * this same function; get_cpu_id() and get_cpu_count() tell it which contiguous part of the
 * flattened tensor is its own, which it copies through its own TCM buffer and writes into
 * the op's output, get_dst_tensor() (in multicore the returned tensor is not used).
 *
 * The parts are correct for any size: core k takes num_elem / cpu_count elements, plus one
 * while k < num_elem % cpu_count.  The parts differ by at most one element, each starts where
 * the one before ends, and together they are exactly the tensor, so no core reads or writes
 * past its end, whatever the size (the published sample enlarges the last core's part and then
 * computes its offset from the enlarged part, which overruns when the size is not a multiple
 * of the core count).  A core with nothing to do (fewer elements than cores) returns at once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    size_t num_elem = t_in.numel();
    torch::Tensor t_out = get_dst_tensor();

    size_t cpu_id = get_cpu_id();
    size_t cpu_count = get_cpu_count();
    size_t share = num_elem / cpu_count;
    size_t spare = num_elem % cpu_count;              /* the first `spare` cores take one more */
    size_t begin = cpu_id * share + (cpu_id < spare ? cpu_id : spare);
    size_t part = share + (cpu_id < spare ? 1 : 0);
    if (part == 0)
        return t_out;

    static constexpr size_t buffer_size = 1024;
    float *tcm_buffer =
        static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * buffer_size));
    if (tcm_buffer == nullptr) {
        printf("relu_forward: core %zu: tcm_malloc(%zu) failed\n", cpu_id,
               sizeof(float) * buffer_size);
        abort();
    }

    auto in_tcm = t_in.tcm_accessor();
    auto out_tcm = t_out.tcm_accessor();
    for (size_t done = 0; done < part; done += buffer_size) {
        size_t left = part - done;
        size_t count = left < buffer_size ? left : buffer_size;

        in_tcm.tensor_to_tcm<float>(tcm_buffer, begin + done, count);
        for (size_t j = 0; j < count; j++)
            tcm_buffer[j] = tcm_buffer[j] > 0.0f ? tcm_buffer[j] : 0.0f;
        out_tcm.tcm_to_tensor<float>(tcm_buffer, begin + done, count);
    }
    torch::neuron::tcm_free(tcm_buffer);
    return t_out;
}
