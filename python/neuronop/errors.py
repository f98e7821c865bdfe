"""The exceptions neuronop raises, one class per kind of failure, and its warnings.

Every class is a RuntimeError, as torch's own op errors are, so code that already catches
RuntimeError around an op keeps working; catch a subclass to tell the kinds apart.  The
message is neuronop's diagnostic as the command line prints it (``neuronop: OP: core N:
error: ...`` and its detail lines), and the parts are attributes: ``where`` (the op and core),
``message``, ``detail``, ``file``, ``line``, ``col``; ``kind`` names the class's kind.

In a DataLoader worker, each error also carries its parts as a note (a last line of its
traceback, ``neuronop error parts: [...]``): torch sends a worker's exception to the
training loop as its class and its traceback's text only, and makes it again by calling the
class with that text (torch/_utils.py, ExceptionWrapper.reraise); the class reads its parts
back from the note, so the loop's exception has the worker's ``where``, ``detail`` and the
rest, and its message is torch's (the worker's traceback) without the note.

The supervisor says what failed as numbers (the error's kind and, for the device, its fault:
cmd/neuronop/serve.h), never as words to match; ``for_kind`` picks the class from them.
"""

import json
import sys

__all__ = [
    "Error", "InputError", "BuildError", "DeviceError", "CrashError", "StackOverflowError",
    "WorkerError", "TimeoutError", "ForbiddenError", "ResourceError", "SupervisorError",
    "DeviceWarning",
]


# the note that carries an error's parts out of a DataLoader worker (see the top)
_PARTS_NOTE = "neuronop error parts: "


def _in_dataloader_worker():
    """Whether this process is a DataLoader worker (whose errors torch rebuilds from text),
    without importing torch here."""
    worker = sys.modules.get("torch.utils.data._utils.worker")
    return worker is not None and getattr(worker, "_worker_info", None) is not None


class Error(RuntimeError):
    """Any failure neuronop reports."""

    kind = "error"

    def __init__(self, message, where="", detail="", file="", line=0, col=0, text=None):
        if (text is None and not (where or detail or file or line or col) and
                isinstance(message, str) and _PARTS_NOTE in message):
            parts = self._parts_from_worker(message)
            if parts is not None:   # made again from a DataLoader worker's traceback
                message, where, detail, file, line, col, text = parts
        self.message = message
        self.where = where
        self.detail = detail
        self.file = file
        self.line = line
        self.col = col
        super().__init__(text if text is not None else
                         format_diag("error", message, where, detail, file, line, col))
        if _in_dataloader_worker() and hasattr(self, "add_note"):   # (Python 3.11 on)
            self.add_note(_PARTS_NOTE + json.dumps(
                [self.kind, message, where, detail, file, line, col]))

    @classmethod
    def _parts_from_worker(cls, text):
        """The parts (message, where, detail, file, line, col, text) of an error of this
        class that text, torch's message for it ("Caught ... Original Traceback ..."),
        carries in its last parts note; None when it carries none of this class.  The text
        is torch's without the note."""
        at = text.rfind("\n" + _PARTS_NOTE)
        if at < 0:
            return None
        start = at + 1 + len(_PARTS_NOTE)
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        try:
            kind, message, where, detail, file, line, col = json.loads(text[start:end])
        except (ValueError, TypeError):   # not a note of ours after all
            return None
        if kind != cls.kind:
            return None
        return message, where, detail, file, line, col, text[:at] + text[end:]

    def __reduce__(self):
        # pickled whole (multiprocessing, a DataLoader worker's error re-raised in its
        # parent), not rebuilt from the message alone, which would be prefixed again
        return (type(self), (self.message, self.where, self.detail, self.file, self.line,
                             self.col, str(self)))


class InputError(Error):
    """A bad argument, library or manifest: what the command line reports with exit 2."""

    kind = "input"


class BuildError(Error):
    """The sources did not compile or link (exit 3): the compiler's messages."""

    kind = "build"


class DeviceError(Error):
    """The op failed on the virtual device: a device rule broke (exit 1)."""

    kind = "rule"


class CrashError(DeviceError):
    """User code crashed: a signal in the kernel's code or in a runtime call it made.  Its
    subclasses are the other ways a kernel can end a run abruptly."""

    kind = "crash"


class StackOverflowError(CrashError):
    """The kernel needed more than its STACK_SIZE."""

    kind = "stack"


class WorkerError(CrashError):
    """The device's worker process died, was ended by user code (exit), or sent a malformed
    report (user code overwrote the runtime's memory)."""

    kind = "worker"


class TimeoutError(DeviceError):  # noqa: A001 - neuronop.TimeoutError, as torch names its own
    """The kernel ran past its time limit and was stopped."""

    kind = "timeout"


class ForbiddenError(DeviceError):
    """User code made a system call the device does not have (files, processes, network)."""

    kind = "syscall"


class ResourceError(Error):
    """The host ran out of memory or another resource, or neuronop could not run the op."""

    kind = "resource"


class SupervisorError(Error):
    """neuronop's supervisor process could not be started, or broke its protocol."""

    kind = "supervisor"


class DeviceWarning(UserWarning):
    """A device warning (TCM leaked at exit, more streams than are fast, ...)."""


# enum nop_errkind and enum nop_fault (include/libneuronop.h), and serve.h's ERRKIND_PROTOCOL
ERR_NOMEM, ERR_INPUT, ERR_COMPILE, ERR_DEVICE, ERR_TEST, ERRKIND_PROTOCOL = 1, 2, 3, 4, 5, 64
FAULT_RULE, FAULT_CRASH, FAULT_STACK, FAULT_TIMEOUT, FAULT_SYSCALL, FAULT_WORKER, FAULT_HOST = (
    1, 2, 3, 4, 5, 6, 7)

_BY_KIND = {ERR_NOMEM: ResourceError, ERR_INPUT: InputError, ERR_COMPILE: BuildError,
            ERRKIND_PROTOCOL: SupervisorError}
_BY_FAULT = {FAULT_RULE: DeviceError, FAULT_CRASH: CrashError, FAULT_STACK: StackOverflowError,
             FAULT_TIMEOUT: TimeoutError, FAULT_SYSCALL: ForbiddenError,
             FAULT_WORKER: WorkerError, FAULT_HOST: ResourceError}


def for_kind(errkind, fault):
    """The class of an error of kind errkind (enum nop_errkind) and fault (enum nop_fault):
    Error itself for a pair this version does not know."""
    if errkind == ERR_DEVICE:
        return _BY_FAULT.get(fault, DeviceError)
    return _BY_KIND.get(errkind, Error)


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
