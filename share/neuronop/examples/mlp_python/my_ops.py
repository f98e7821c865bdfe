"""The relu of librelu.so as an autograd function: the forward runs relu_forward on the
(virtual) device, the backward relu_backward with the input the forward saw."""
import torch
from torch_neuronx.xla_impl import custom_op

custom_op.load_library("librelu.so")


class Relu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.ops.my_ops.relu_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.ops.my_ops.relu_backward(grad, x)
