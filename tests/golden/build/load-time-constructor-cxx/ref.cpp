// A reference with a constructor of its own: named as one, at its line, not as a static
// initialiser (the word in this comment, constructor, is not where it is).
#include <torch/torch.h>

volatile int loaded;

__attribute__((constructor)) static void at_load(void)
{
    loaded = 1;
}

torch::Tensor relu_ref(const torch::Tensor &t)
{
    return torch::clamp(t, 0.0, 1e30);
}
