"""torch_neuronx.xla_impl.custom_op under `neuronop python`: neuronop's custom_op (load and
load_library, with the real module's arguments)."""

from neuronop.custom_op import load, load_library  # noqa: F401

__all__ = ["load", "load_library"]
