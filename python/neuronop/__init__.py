"""neuronop from Python: custom ops on the virtual GPSIMD core array, called from PyTorch.

    from neuronop import custom_op
    custom_op.load(name="relu", compute_srcs=["relu.cpp"], shape_srcs=["shape.cpp"],
                   build_directory=os.getcwd())
    y = torch.ops.my_ops.relu_forward(x)

Every op runs in neuronop's confined worker with every device check on, as under
`neuronop run`; a failure raises a neuronop.Error (a RuntimeError) carrying the diagnostic.
See neuronop-python(1).
"""

import sys

try:
    import torch  # noqa: F401  (every op call is a torch one)
except ModuleNotFoundError as e:
    if e.name != "torch":
        raise
    raise ModuleNotFoundError(
        "neuronop needs torch, and this Python (%s) has none: install python3-torch, or "
        "choose a Python that has it with NEURONOP_PYTHON" % sys.executable,
        name="torch") from None

from . import custom_op  # noqa: E402  (after the check: it imports torch)
from ._ops import format_stats, stats  # noqa: E402
from .errors import (BuildError, CrashError, DeviceError, DeviceWarning, Error,  # noqa: E402
                     ForbiddenError, InputError, ResourceError, StackOverflowError,
                     SupervisorError, TimeoutError, WorkerError)

__all__ = [
    "custom_op", "stats", "format_stats", "Error", "InputError", "BuildError",
    "DeviceError", "CrashError", "StackOverflowError", "WorkerError", "TimeoutError",
    "ForbiddenError", "ResourceError", "SupervisorError", "DeviceWarning",
]
__version__ = "0.1.0"
