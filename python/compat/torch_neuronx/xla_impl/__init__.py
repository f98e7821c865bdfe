"""torch_neuronx.xla_impl under `neuronop python`: custom_op only."""
