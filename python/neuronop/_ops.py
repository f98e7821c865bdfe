"""Registering a built library's ops as torch.ops.NAMESPACE.OP, and calling them.

Each op is defined with torch.library from the library's self-description (its arguments'
types and, where the library records them, their names, so keyword calls work) and gets a
CPU implementation that runs it on the virtual device through the supervisor (_client.py).
torch itself checks the arguments against the schema.  A namespace is defined once per
process (torch allows one DEF library per namespace), so the Library objects live in a
registry here, as do the ops, so that loading a library twice is harmless and two libraries
defining one op is an error.
"""

import keyword
import os
import sys
import threading
import time
import warnings

import torch
from torch.autograd import forward_ad

from . import errors
from ._client import (ARG_DOUBLE, ARG_INT64, ARG_SCALAR, ARG_TENSOR, DTYPES, KINDS, env_flag,
                      supervisor)

# schema types of the library's argument kinds
SCHEMA_TYPES = {"tensor": "Tensor", "scalar": "Scalar", "double": "float", "int64": "int"}

_lock = threading.RLock()
_namespaces = {}   # namespace -> torch.library.Library(namespace, "DEF")
_ops = {}          # "ns::op" -> Op
_libraries = {}    # real path -> Library

# A fork (a DataLoader worker) waits for a library's registration under way in another
# thread: the child would have the lock held by a thread it does not have, and its own first
# load would wait for it for ever, with the registry half written.  The forking thread holds
# the lock across the fork and lets go of it on both sides.


def _after_fork_in_child():
    """The lock let go of; the statistics from none: the child's are its own calls' (one
    that exited normally printed, under --stats, its parent's calls before the fork too)."""
    _lock.release()
    for op in _ops.values():
        op.calls = op.modeled_calls = 0
        op.host_seconds = op.device_seconds = 0.0


os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                    after_in_child=_after_fork_in_child)


class Op:
    """One registered op: where it comes from and how it is called."""

    def __init__(self, qualname, path, index, kinds, names, schema):
        self.qualname = qualname
        self.path = path
        self.index = index
        self.kinds = kinds
        self.names = names
        self.schema = schema
        self.redefined = None   # the schema its library's file now has, when it differs
        self.calls = 0
        self.host_seconds = 0.0
        self.device_seconds = 0.0
        self.modeled_calls = 0
        self._overload = None

    def __call__(self, *args):
        return _run(self, args)

    def autograd(self, *args):
        """The op's Autograd kernel: where the tensors are those being differentiated,
        functorch's (grad, jacrev) and forward-mode AD's included, which the CPU kernel
        sees unwrapped (a new Python user's find: their gradients were silently zero).
        The op has no derivative: a tensor that would take one is refused; else the op
        goes on down the dispatcher, below autograd, as an op without this kernel would:
        to the CPU kernel, or to what a mode or tensor subclass puts between (make_fx and
        aot_function record the op itself, and a meta or sparse tensor gets torch's own
        error).  Running the CPU kernel from here, those saw its copies instead, and a
        traced graph replayed the first input's result (a Python user's find)."""
        grad = torch.is_grad_enabled()
        for i, (kind, value) in enumerate(zip(self.kinds, args)):
            if kind != ARG_TENSOR:
                continue
            _tensor_argument(self, i, value)
            if grad and value.requires_grad:
                raise _argument_error(self, i, _no_derivative())
            if forward_ad.unpack_dual(value).tangent is not None:
                raise _argument_error(self, i, "has a forward-mode tangent (torch.autograd."
                                      "forward_ad), but the op has no derivative, so it "
                                      "would be lost: call it on the primal")
        below = torch._C._AutoDispatchBelowAutograd()   # a guard, while it lives (as torch's
        try:                                              # own _prims_common/wrappers.py)
            return self.overload()(*args)
        finally:
            del below

    def overload(self):
        """torch.ops.NAMESPACE.OP.default: the op as torch's dispatcher calls it."""
        if self._overload is None:
            namespace, name = self.qualname.split("::", 1)
            self._overload = getattr(getattr(torch.ops, namespace), name).default
        return self._overload


class Library:
    """A loaded library: its path, namespace and ops."""

    def __init__(self, path, name, namespace, ops):
        self.path = path
        self.name = name
        self.namespace = namespace
        self.ops = ops

    def __repr__(self):
        return "<neuronop library %r: %s>" % (self.path, ", ".join(
            "%s.%s" % (self.namespace, op) for op in self.ops))


def _param_ok(kind, name):
    """Whether torch's schema parser takes name for a parameter of kind (it has words of its
    own, a parameter named Tensor) and Python a keyword argument of that name."""
    # (self: torch.ops' packets take their first argument by that name, and a keyword call
    # giving it says "got multiple values for argument 'self'")
    if not name.isidentifier() or keyword.iskeyword(name) or name == "self":
        return False
    try:
        torch._C.parse_schema("f(%s %s) -> Tensor" % (SCHEMA_TYPES[kind], name))
    except RuntimeError:
        return False
    return True


def _param_names(args, recorded):
    """The parameters' names: the kernel's own where torch and Python can take them; one
    they cannot gets a trailing underscore (in: in_), as PEP 8 has it, else argN.  Only that
    one: a parameter named in used to rename every other one argN too."""
    if len(recorded) != len(args):
        return ["arg%d" % i for i in range(len(args))]
    names = []
    for i, (kind, name) in enumerate(zip(args, recorded)):
        # a name taken already goes on; a new one must not be a later parameter's own
        for candidate in _candidates(name, i):
            if candidate not in names and _param_ok(kind, candidate) and \
                    (candidate == name or candidate not in recorded[i + 1:]):
                names.append(candidate)
                break
    return names


def _candidates(name, i):
    """The names parameter i, named name by its kernel, may be given, in order: its own,
    with an underscore, then argN, argN_, argN__... (one of which is free); an unnamed one
    ("") only the last."""
    if name:
        yield name
        yield name + "_"
    n = 0
    while True:
        yield "arg%d" % i + "_" * n
        n += 1


def _schema(op):
    """The op's schema and parameter names; None when torch cannot take the op's name."""
    args = op["args"]
    names = _param_names(args, op.get("argnames") or [])
    for attempt in (names, ["arg%d" % i for i in range(len(args))]):
        params = ", ".join("%s %s" % (SCHEMA_TYPES[t], n) for t, n in zip(args, attempt))
        schema = "%s(%s) -> Tensor" % (op["name"], params)
        try:   # torch's own parser: it has keywords of its own (a parameter named Tensor)
            torch._C.parse_schema(schema)
        except RuntimeError:
            continue
        return schema, attempt
    return None, names


def _torch_has(namespace, name):
    """Whether torch already has namespace::name (its own op, or an extension's)."""
    try:
        torch._C._jit_get_operation("%s::%s" % (namespace, name))
    except RuntimeError:
        return False
    return True


# namespaces torch keeps for itself (TorchScript's prim): torch.library refuses to define
# ops in them, with a ValueError
# What torch.ops.NAMESPACE itself has: an op of such a name is out of reach there, and the
# Autograd kernel's redispatch, which looks the op up so, would find the attribute instead
_NAMESPACE_ATTRS = frozenset(dir(torch._ops._OpNamespace("neuronop")))

def show(stream, text):
    """Writes text on stream (sys.stdout or sys.stderr, looked up by the caller at the time),
    flushed; as print() does, nothing when it is None, which python makes it when its
    descriptor was closed (a Python tester's find: the op's result was lost)."""
    if stream is None:
        return
    stream.write(text)
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()


_RESERVED = frozenset(getattr(torch.library, "_reserved_namespaces", ("prim",)))


def _ops_attribute(namespace):
    """What torch.ops.NAMESPACE is, when it is something of torch.ops's own rather than a
    namespace of ops (its load_library method, its loaded_libraries set, the pyops namespace
    of Python ops), or None: an op registered there is out of reach as torch.ops.NS.OP."""
    try:
        got = object.__getattribute__(torch.ops, namespace)   # not its __getattr__, which
    except AttributeError:                                    # makes namespaces
        return None
    return None if type(got) is torch._ops._OpNamespace else got


def register(path):
    """Registers the ops of the built library at path; returns its Library.  Loading the
    same file again registers nothing new."""
    real = os.path.realpath(path)
    if os.path.isdir(real):   # (a new user's find: "no such library file" for a folder)
        raise errors.InputError(
            "'%s' is a folder: give the library file built in it (its build/lib<name>.so, "
            "made by 'neuronop build' or custom_op.load)" % path)
    if not os.path.isfile(real):
        # (a new user's find: a script run from another folder was told to build it first)
        where = "" if os.path.isabs(path) else \
            " (a relative path is read from the current folder, '%s')" % os.getcwd()
        raise errors.InputError("'%s': no such library file%s; build it first "
                                "(custom_op.load), or give its path" % (path, where))
    with _lock:
        desc = supervisor().load(real)
        namespace = desc.get("namespace") or desc["library"]
        if namespace in _RESERVED:
            raise errors.InputError(
                "namespace '%s' of '%s' is reserved by torch: choose another namespace in "
                "NEURON_LIBRARY(...) (a C library's namespace is its name)"
                % (namespace, path))
        if _ops_attribute(namespace) is not None:   # (a Python tester's find)
            raise errors.InputError(
                "namespace '%s' of '%s' is a name torch.ops keeps for its own (torch.ops.%s "
                "is not a namespace of ops): choose another namespace in NEURON_LIBRARY(...) "
                "(a C library's namespace is its name)" % (namespace, path, namespace))
        ops = desc.get("ops", [])
        known = _libraries.get(real)
        # the supervisor has just read the file anew, and a call names its op by its index in
        # what it read: each op registered from this file points at its op there before
        # anything below can raise, or at None when a rebuild left it out
        index = {"%s::%s" % (namespace, op["name"]): i for i, op in enumerate(ops)}
        for have in _ops.values():
            if have.path == real:
                have.index = index.get(have.qualname)
        planned = []
        for i, op in enumerate(ops):
            qualname = "%s::%s" % (namespace, op["name"])
            schema, names = _schema(op)
            if op["name"] in _NAMESPACE_ATTRS:   # (a reviewer's find: its calls failed)
                raise errors.InputError(
                    "op '%s' of '%s' has a name torch.ops keeps for its own (torch.ops.%s.%s "
                    "is the namespace's %s): rename the op"
                    % (qualname, path, namespace, op["name"], op["name"]))
            if schema is None:
                raise errors.InputError(
                    "op '%s' of '%s' has a name torch cannot take as an op's (it is a word "
                    "of TorchScript's, such as 'global' or 'def'): rename the op"
                    % (qualname, path))
            have = _ops.get(qualname)
            if have is not None:
                if have.path != real:
                    raise errors.InputError(
                        "op '%s' of '%s' is already defined by '%s': two libraries cannot "
                        "define the same op in one namespace; rename one of them (its "
                        "NEURON_LIBRARY namespace or the op)" % (qualname, path, have.path))
                if have.schema != schema:
                    have.redefined = schema   # its calls would reach the new code
                    raise errors.InputError(
                        "op '%s' was loaded as %s and '%s' now defines it as %s: torch "
                        "cannot change a defined op's schema; restart Python to load the "
                        "new signature" % (qualname, have.schema, path, schema))
                have.index = i
                have.redefined = None   # rebuilt back to the schema it was loaded with
                continue
            if _torch_has(namespace, op["name"]):
                raise errors.InputError(
                    "op '%s' of '%s' clashes with an op torch already has: choose another "
                    "namespace in NEURON_LIBRARY(...) or another op name" % (qualname, path))
            kinds = [KINDS[t] for t in op["args"]]
            planned.append(Op(qualname, real, i, kinds, names, schema))
        if planned:
            lib = _namespaces.get(namespace)
            if lib is None:
                try:   # (torch says a reserved namespace with a ValueError)
                    lib = torch.library.Library(namespace, "DEF")
                except (RuntimeError, ValueError) as e:
                    raise errors.InputError(
                        "namespace '%s' of '%s' cannot be defined from Python (%s): choose "
                        "another namespace in NEURON_LIBRARY(...)"
                        % (namespace, path, str(e).splitlines()[0])) from None
                _namespaces[namespace] = lib
            for op in planned:
                lib.define(op.schema)
                # an op with no tensor argument has no backend to dispatch on: it gets the
                # key torch uses for every backend
                key = "CPU" if ARG_TENSOR in op.kinds else "CompositeExplicitAutograd"
                lib.impl(op.schema.split("(", 1)[0], op, key)
                if key == "CPU":
                    lib.impl(op.schema.split("(", 1)[0], op.autograd, "Autograd")
                _ops[op.qualname] = op
        if known is None:
            known = _libraries[real] = Library(real, desc["library"], namespace, [])
        known.ops = [op["name"] for op in ops]   # a rebuild's
        return known


def _argument_error(op, i, why):
    return errors.InputError("argument '%s' %s" % (op.names[i], why), where=op.qualname)


def _tensor_argument(op, i, value):
    """value, a Tensor argument: torch's dispatcher lets None through for one (an undefined
    tensor), which torch's own ops refuse (a Python user's find: an AttributeError came)."""
    if value is None:
        raise _argument_error(op, i, "is None: expected a proper Tensor, as torch's own ops "
                              "say")
    return value


# the folders whose frames lie between the user's call and _run: this package's and torch's
# (torch.ops' __call__, an OpOverload's, a traced module's), spelled as their frames'
# co_filename are (as __file__ is: no abspath, which would resolve a '..' they keep)
_INNER = tuple(os.path.dirname(m.__file__) + os.sep for m in (errors, torch))


def _caller_level():
    """The stacklevel at which a warnings.warn in _run names the line that called the op:
    the first frame outside this package and torch (how many frames of each lie between
    depends on how the op was called); 1, _run itself, when every frame is theirs."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_INNER):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 1


_NO_DERIVATIVE = ("requires grad, but the op has no derivative, so its gradient would be "
                  "lost: call it from a torch.autograd.Function's forward (as the tutorials' "
                  "my_ops.py does), under torch.no_grad(), or on .detach()ed tensors")
_NO_SECOND_DERIVATIVE = (
    "requires grad in a torch.autograd.Function's backward run with create_graph=True (a "
    "second derivative), but the op has no derivative: mark that backward "
    "@torch.autograd.function.once_differentiable, or leave out create_graph")


def _no_derivative():
    """Why a tensor that requires grad is refused: the call from a custom Function's backward
    run to make a graph (a new user's find: the advice to call it from a Function pointed
    where it already was), or any other."""
    frame = sys._getframe(2)
    for _ in range(32):
        if frame is None:
            break
        ctx = frame.f_locals.get("ctx") if frame.f_code.co_name == "backward" else None
        if isinstance(ctx, torch.autograd.function.BackwardCFunction):
            return _NO_SECOND_DERIVATIVE
        frame = frame.f_back
    return _NO_DERIVATIVE


def _run(op, args):
    """The CPU implementation of every neuronop op."""
    if op.index is None:
        raise errors.InputError(
            "op '%s' is no longer in '%s': the library was rebuilt without it since it was "
            "loaded" % (op.qualname, op.path), where=op.qualname)
    if op.redefined:   # the file read again: rebuilt as it was loaded, the op is itself again
        try:           # (a new user's find: only another load_library cleared this)
            register(op.path)
        except errors.InputError:
            pass
    if op.redefined:
        raise errors.InputError(
            "op '%s' was loaded as %s, and '%s' was rebuilt since with %s: torch cannot change "
            "a defined op's schema; restart Python to call the new one"
            % (op.qualname, op.schema, op.path, op.redefined), where=op.qualname)
    grad = torch.is_grad_enabled()
    values = []
    for i, (kind, value) in enumerate(zip(op.kinds, args)):
        if kind == ARG_TENSOR:
            _tensor_argument(op, i, value)
            if value.dtype not in DTYPES:
                raise _argument_error(op, i, "is a %s tensor, which the device does not have "
                                      "(float32, bfloat16, float16 and 8- to 64-bit integers): "
                                      "convert it first, e.g. with .float()"
                                      % str(value.dtype).replace("torch.", ""))
            if value.dim() > 8:
                raise _argument_error(op, i, "has %d dimensions; the device has at most 8"
                                      % value.dim())
            if value.requires_grad:
                if grad:
                    raise _argument_error(op, i, _no_derivative())
                value = value.detach()   # (one that does not need grad is used as it is)
        elif kind == ARG_SCALAR and isinstance(value, complex):
            raise _argument_error(op, i, "is complex, which the device does not have")
        values.append((kind, value))
    t0 = time.perf_counter()
    res, reply = supervisor().call(op.path, op.qualname.split("::", 1)[1], values,
                                   profile=_stats_on())
    op.calls += 1
    op.host_seconds += time.perf_counter() - t0
    if res.device_seconds >= 0:
        op.device_seconds += res.device_seconds
        op.modeled_calls += 1
    try:
        if res.diags:
            level = _caller_level()
            for d in res.diags:
                warnings.warn(d.text(), errors.DeviceWarning, stacklevel=level)
    finally:   # also when a filter makes a warning an exception: the kernel's words stay
        if res.printf:   # after the op, as on the device and in `neuronop run`
            show(sys.stdout, res.printf)
    if res.output is None:
        reply.raise_error()
    return res.output


# ---- statistics --------------------------------------------------------------------------

_stats_enabled = None


def _stats_on():
    global _stats_enabled
    if _stats_enabled is None:
        _stats_enabled = env_flag("NEURONOP_STATS")
    return _stats_enabled


def stats():
    """Per op: calls, host seconds (each call as Python sees it), the cost model's device
    seconds (None unless the process runs under ``neuronop python --stats`` or with
    NEURONOP_STATS=1 in its environment) and the calls it modeled: the ones that succeeded
    (a failed call has no device time)."""
    with _lock:
        return {name: {"calls": op.calls, "host_seconds": op.host_seconds,
                       "device_seconds": op.device_seconds if op.modeled_calls else None,
                       "modeled_calls": op.modeled_calls}
                for name, op in sorted(_ops.items())}


def format_stats():
    """The stats as the table ``neuronop python --stats`` prints at exit."""
    rows = [(name, s) for name, s in stats().items() if s["calls"]]
    width = max([28] + [len(name) for name, _ in rows])   # the columns stay aligned
    lines = ["neuronop: %-*s %8s %14s %16s" % (width, "op", "calls", "host ms/call",
                                               "device ms/call")]
    for name, s in rows:
        # per modeled call: the failed ones, which have no device time, would dilute it
        dev = ("%16.4f" % (1e3 * s["device_seconds"] / s["modeled_calls"])
               if s["device_seconds"] is not None else "%16s" % "-")
        lines.append("neuronop: %-*s %8d %14.4f %s" % (width, name, s["calls"],
                                                      1e3 * s["host_seconds"] / s["calls"],
                                                      dev))
    if not rows:
        lines.append("neuronop: no op was called")
    return "\n".join(lines)
