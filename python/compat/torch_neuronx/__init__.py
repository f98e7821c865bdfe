"""A stand-in for torch_neuronx under `neuronop python` only (never installed on Python's
own path): just enough of it, xla_impl.custom_op, for the tutorials' build.py and my_ops.py
to run unmodified with their ops on neuronop's virtual GPSIMD array."""
