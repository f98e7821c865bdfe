"""neuronop from Python: custom ops on the virtual GPSIMD core array, called from PyTorch.

    from neuronop import custom_op
    custom_op.load(name="relu", compute_srcs=["relu.cpp"], shape_srcs=["shape.cpp"],
                   build_directory=os.getcwd())
    y = torch.ops.my_ops.relu_forward(x)

Every op runs in neuronop's confined worker with every device check on, as under
`neuronop run`; a failure raises a neuronop.Error (a RuntimeError) carrying the diagnostic.
See neuronop-python(1).
"""

from . import custom_op
from ._ops import format_stats, stats
from .errors import (BuildError, CrashError, DeviceError, DeviceWarning, Error,
                     ForbiddenError, InputError, ResourceError, StackOverflowError,
                     SupervisorError, TimeoutError, WorkerError)

__all__ = [
    "custom_op", "stats", "format_stats", "Error", "InputError", "BuildError",
    "DeviceError", "CrashError", "StackOverflowError", "WorkerError", "TimeoutError",
    "ForbiddenError", "ResourceError", "SupervisorError", "DeviceWarning",
]
__version__ = "0.1.0"
