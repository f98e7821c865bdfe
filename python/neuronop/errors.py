"""The exceptions neuronop raises, one class per kind of failure, and its warnings.

Every class is a RuntimeError, as torch's own op errors are, so code that already catches
RuntimeError around an op keeps working; catch a subclass to tell the kinds apart.  The
message is neuronop's diagnostic as the command line prints it (``neuronop: OP: core N:
error: ...`` and its detail lines), and the parts are attributes: ``where`` (the op and core),
``message``, ``detail``, ``file``, ``line``, ``col``.
"""

__all__ = [
    "Error", "InputError", "BuildError", "DeviceError", "CrashError", "TimeoutError",
    "ForbiddenError", "ResourceError", "SupervisorError", "DeviceWarning",
]


class Error(RuntimeError):
    """Any failure neuronop reports."""

    def __init__(self, message, where="", detail="", file="", line=0, col=0, text=None):
        self.message = message
        self.where = where
        self.detail = detail
        self.file = file
        self.line = line
        self.col = col
        super().__init__(text if text is not None else
                         format_diag("error", message, where, detail, file, line, col))


class InputError(Error):
    """A bad argument, library or manifest: what the command line reports with exit 2."""


class BuildError(Error):
    """The sources did not compile or link (exit 3): the compiler's messages."""


class DeviceError(Error):
    """The op failed on the virtual device: a device rule broke (exit 1)."""


class CrashError(DeviceError):
    """The kernel crashed, overflowed its stack, or its worker process died."""


class TimeoutError(DeviceError):  # noqa: A001 - neuronop.TimeoutError, as torch names its own
    """The kernel ran past its time limit and was stopped."""


class ForbiddenError(DeviceError):
    """User code made a system call the device does not have (files, processes, network)."""


class ResourceError(Error):
    """The host ran out of memory or another resource."""


class SupervisorError(Error):
    """neuronop's supervisor process could not be started, or broke its protocol."""


class DeviceWarning(UserWarning):
    """A device warning (TCM leaked at exit, more streams than are fast, ...)."""


def format_diag(severity, message, where="", detail="", file="", line=0, col=0):
    """One diagnostic in the command line's format (cmd/neuronop/report.c)."""
    if file:
        head = file
        if line > 0:
            head += ":%d" % line
            if col > 0:
                head += ":%d" % col
        text = "%s: %s: %s" % (head, severity, message)
    elif where:
        text = "neuronop: %s: %s: %s" % (where, severity, message)
    else:
        text = "neuronop: %s: %s" % (severity, message)
    if detail:
        text += "\n" + detail
    return text
