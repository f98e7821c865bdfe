"""Builds librelu.so in this folder, as the Neuron tutorials' build.py does:
    neuronop python build.py
"""
import os

from torch_neuronx.xla_impl import custom_op

custom_op.load(
    name="relu",
    compute_srcs=["relu.cpp"],
    shape_srcs=["shape.cpp"],
    build_directory=os.getcwd(),
)
