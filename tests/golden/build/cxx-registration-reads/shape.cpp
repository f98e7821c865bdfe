/* A registration that would leak the host's files or the environment through the ops it
 * registers (an op the manifest lacks fails the build).  It may read neither: it registers
 * only neg, and the build passes. */
#include <stdio.h>
#include <stdlib.h>
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor neg_shape(const torch::Tensor &t) { return torch::empty(t.sizes(), t.scalar_type()); }

NEURON_LIBRARY(my_ops, m) {
    FILE *f = fopen("/etc/passwd", "r");
    bool leaked = getenv("PATH") != NULL;
    if (f) {
        leaked = true;
        fclose(f);
    }
    m.def(leaked ? "leaked_secret" : "neg", &neg_shape, "neg");
}
