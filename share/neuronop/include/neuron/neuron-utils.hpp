/*
 * neuron/neuron-utils.hpp - the device's services for C++ kernels: which core this is, the
 * op's output tensor, and the core's TCM.  <torch/torch.h> includes it; including it alone
 * includes torch/torch.h.
 *
 * As on the device, get_cpu_id, get_cpu_count and get_dst_tensor are in the global namespace
 * (a kernel calls them unqualified) and tcm_malloc/tcm_free in torch::neuron.
 */
#ifndef NEURONOP_NEURON_UTILS_HPP
#define NEURONOP_NEURON_UTILS_HPP

#include <torch/torch.h>

/* The runtime's get_dst_tensor (neuronop.h) under another name: the C++ one returns a
 * Tensor, and one name cannot have both. */
extern "C" nt_tensor *nt__c_get_dst_tensor(void) __asm__("get_dst_tensor");

/* The op's output tensor, shaped by the shape function.  Writing to it (instead of returning
 * a new tensor) saves a copy; in multicore it is the only way to produce the output, each
 * core writing its own part. */
inline torch::Tensor get_dst_tensor() noexcept { return torch::Tensor(nt__c_get_dst_tensor()); }

/* get_cpu_id() in [0, get_cpu_count()) and get_cpu_count() are neuronop.h's, in the global
 * namespace. */

namespace torch {
namespace neuron {
/* The C functions themselves, not wrappers: a memcheck report names the line of the
 * kernel's own tcm_malloc call.
 *   void *tcm_malloc(size_t nbytes): from this core's 16 KB TCM pool; nullptr when the pool
 *       cannot serve nbytes
 *   void tcm_free(void *ptr): ptr from tcm_malloc on this core (nullptr does nothing) */
using ::tcm_malloc;
using ::tcm_free;
using ::get_cpu_id;
using ::get_cpu_count;
inline torch::Tensor get_dst_tensor() noexcept { return ::get_dst_tensor(); }
} // namespace neuron
} // namespace torch

#endif /* NEURONOP_NEURON_UTILS_HPP */
