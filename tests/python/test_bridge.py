"""The Python package end to end, in one Python process (importing torch costs a second):
run by tests/e2e/t0601-python-ops.sh as

    neuronop python --timeout 1 test_bridge.py

with NEURONOP_TEST_MLP (a folder holding the mlp_python example's sources, where they are
built), NEURONOP_TEST_LIBS (a folder of libraries built by the shell script) and
NEURONOP_TEST_CLI (what `neuronop run` printed for the failing ops, one file per op) in the
environment.  Prints TAP.  Every expectation comes from torch itself: torch.relu and its
autograd, computed here, and torch's own argument checking.
"""

import contextlib
import errno
import io
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings

import torch

import neuronop
from neuronop import custom_op

MLP = os.path.realpath(os.environ["NEURONOP_TEST_MLP"])
LIBS = os.environ["NEURONOP_TEST_LIBS"]
CLI = os.environ["NEURONOP_TEST_CLI"]
EXAMPLES = os.path.join(os.environ["NEURONOP_SRC"], "share", "neuronop", "examples")
SANITIZED = bool(os.environ.get("NEURONOP_SANITIZED"))

count = 0
failed = 0


def check(name):
    """Runs the decorated function as TAP test `name`; an exception fails it."""
    def run(fn):
        global count, failed
        count += 1
        try:
            fn()
        except Exception:
            failed += 1
            print("not ok %d - %s" % (count, name))
            for line in traceback.format_exc().splitlines():
                print("# " + line)
        else:
            print("ok %d - %s" % (count, name))
        sys.stdout.flush()
        return fn
    return run


def raises(cls, fn, *args, **kwargs):
    """The exception fn raises, which must be exactly of class cls."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the class is checked below
        assert type(e) is cls, "raised %s (%s), not %s" % (type(e).__name__, e, cls.__name__)
        return e
    raise AssertionError("%s raised nothing" % getattr(fn, "__name__", fn))


def raises_kind_of(cls, fn, *args):
    """The exception fn raises, which must be a cls."""
    try:
        fn(*args)
    except cls as e:
        return e
    raise AssertionError("%s raised nothing" % getattr(fn, "__name__", fn))


def lib(name):
    return os.path.join(LIBS, name)


torch.manual_seed(0)
x = torch.randn(64, 120)
g = torch.randn(64, 120)


@check("custom_op.load builds librelu.so and registers its ops")
def _():
    path = custom_op.load(name="relu", compute_srcs=[os.path.join(MLP, "relu.cpp")],
                          shape_srcs=[os.path.join(MLP, "shape.cpp")], build_directory=MLP)
    assert os.path.realpath(path) == os.path.join(MLP, "librelu.so"), path
    assert os.path.isfile(path), path
    assert hasattr(torch.ops.my_ops, "relu_forward")
    assert hasattr(torch.ops.my_ops, "relu_backward")


@check("threads that load one library at once all get it")
def _():
    # each writes the manifest through a file of its own before renaming it into place (one
    # per process, once: every thread but the first failed with FileNotFoundError)
    with tempfile.TemporaryDirectory() as top:
        with open(os.path.join(MLP, "shape.cpp")) as f:   # (the example's ops are taken)
            shape = f.read().replace("NEURON_LIBRARY(my_ops, m)", "NEURON_LIBRARY(thr_ops, m)")
        with open(os.path.join(top, "shape.cpp"), "w") as f:
            f.write(shape)
        with open(os.path.join(MLP, "relu.cpp")) as f, \
                open(os.path.join(top, "relu.cpp"), "w") as g:
            g.write(f.read())
        manifest = os.path.join(top, "build", ".neuronop", "thr.yaml")
        failed = []

        def load():
            try:
                custom_op.load(name="thr", compute_srcs=[os.path.join(top, "relu.cpp")],
                               shape_srcs=[os.path.join(top, "shape.cpp")],
                               build_directory=os.path.join(top, "build"))
            except Exception as e:  # noqa: BLE001 - any is the failure
                failed.append(repr(e))
        for _ in range(3):   # a manifest to write each time (its write was the race)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(manifest)
            threads = [threading.Thread(target=load) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert not failed, failed
        assert os.listdir(os.path.dirname(manifest)) == ["thr.yaml"]
        assert torch.equal(torch.ops.thr_ops.relu_forward(x), torch.relu(x))


@check("custom_op.load refuses a name that is no C identifier before writing anything")
def _():
    srcs = dict(compute_srcs=[os.path.join(MLP, "relu.cpp")],
                shape_srcs=[os.path.join(MLP, "shape.cpp")])
    with tempfile.TemporaryDirectory() as top:
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = os.path.join(top, "cache")   # the default folder's
        try:
            for name in ("../x", "a/b", "1x"):
                for folder in (os.path.join(top, "b", "c"), None):
                    e = raises(neuronop.InputError, custom_op.load, name=name,
                               build_directory=folder, **srcs)
                    assert str(e) == ("neuronop: error: library name '%s' is not a C "
                                      "identifier (letters, digits and '_', not starting "
                                      "with a digit)" % name), e
        finally:
            if old is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = old
        written = [os.path.join(d, f) for d, dirs, files in os.walk(top) for f in dirs + files]
        assert not written, written


@check("a compile error raises BuildError whose file, line and col are the error's")
def _():
    with tempfile.TemporaryDirectory() as top:
        bad = os.path.join(top, "bad.cpp")
        with open(bad, "w") as f:
            f.write("#include <torch/torch.h>\n\n"   # a warning comes before the error
                    "int warned() { int unused = 0; return 1; }\n"
                    "torch::Tensor relu_forward(const torch::Tensor& t) { return nope(t); }\n")
        e = raises(neuronop.BuildError, custom_op.load, name="bad", compute_srcs=[bad],
                   shape_srcs=[os.path.join(MLP, "shape.cpp")], build_directory=top,
                   extra_cflags=["-Wall"])
        assert "warning" in str(e), str(e)
        assert os.path.basename(e.file) == "bad.cpp" and e.line == 4 and e.col > 0, vars(e)
        assert "'nope' was not declared" in e.message, e.message
        assert any(line.endswith(e.message) for line in str(e).splitlines()), e
        # verbose: the steps on stderr, as on success, and not in the exception (a Python
        # tester's find: it began with a g++ command line)
        steps = io.StringIO()
        with contextlib.redirect_stderr(steps):
            v = raises(neuronop.BuildError, custom_op.load, name="bad", compute_srcs=[bad],
                       shape_srcs=[os.path.join(MLP, "shape.cpp")], build_directory=top,
                       extra_cflags=["-Wall"], verbose=True)
        assert "neuronop: note: " not in str(v) and v.message == e.message, str(v)
        assert re.search(r"^neuronop: note: .*bad\.cpp$", steps.getvalue(), re.M), steps.getvalue()


@check("custom_op.load's bad arguments are named as arguments, not as its manifest's lines")
def _():
    shape = os.path.join(MLP, "shape.cpp")
    with tempfile.TemporaryDirectory() as top:
        e = raises(neuronop.InputError, custom_op.load, name="c", build_directory=top,
                   compute_srcs=[os.path.join(EXAMPLES, "relu", "relu.c")],
                   shape_srcs=[os.path.join(EXAMPLES, "relu", "shape.c")])
        assert e.message.startswith("custom_op.load takes the ops from the NEURON_LIBRARY "
                                    "registration in a C++ shape source"), e
        assert "custom_op.load_library" in e.detail, e
        missing = os.path.join(top, "nothere.cpp")
        # all in a missing folder (a Python tester's find: the build's --library-dir was named)
        gone = os.path.join(top, "gone")
        for args, said in (
                (dict(compute_srcs=[missing]),
                 "custom_op.load's compute_srcs: source file '%s' not found" % missing),
                (dict(compute_srcs=[os.path.join(gone, "r.cpp")],
                      shape_srcs=[os.path.join(gone, "s.cpp")]),
                 "custom_op.load's compute_srcs: source file '%s' not found"
                 % os.path.join(gone, "r.cpp")),
                (dict(compute_srcs=[os.path.join(MLP, "relu.cpp")],
                      extra_cflags=["-fplugin=x.so"]),
                 "custom_op.load's extra_cflags: unsupported flag '-fplugin=x.so'")):
            e = raises(neuronop.InputError, custom_op.load, name="args", build_directory=top,
                       **dict(dict(shape_srcs=[shape]), **args))
            assert e.message.startswith(said) and not e.file and "manifest" not in str(e), e
        # a build_directory that cannot be made (a Python user's find: a bare OSError)
        afile = os.path.join(top, "afile")
        open(afile, "w").close()
        for bd in (afile, os.path.join(afile, "sub")):
            e = raises(neuronop.InputError, custom_op.load, name="bd", build_directory=bd,
                       compute_srcs=[os.path.join(MLP, "relu.cpp")], shape_srcs=[shape])
            assert e.message.startswith("custom_op.load's build_directory: cannot make '%s"
                                        % afile), e


@check("None for a Tensor argument is an InputError naming it, as torch's own ops refuse it")
def _():
    # (a Python user's find: an AttributeError came, with grad mode on and off)
    try:
        torch.ops.aten.relu(None)
    except RuntimeError as e:
        assert "Expected a proper Tensor but got None" in str(e), e
    else:
        raise AssertionError("torch.ops.aten.relu(None) raised nothing")
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            e = raises(neuronop.InputError, torch.ops.my_ops.relu_backward, g, None)
            assert "argument 'x' is None: expected a proper Tensor" in str(e), e


@check("a positional call gives torch.relu's values exactly")
def _():
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("keyword calls use the kernel's parameter names")
def _():
    want = torch.where(x > 0, g, torch.zeros_like(g))
    assert torch.equal(torch.ops.my_ops.relu_backward(grad=g, x=x), want)
    assert torch.equal(torch.ops.my_ops.relu_backward(g, x=x), want)
    assert "relu_backward(Tensor grad, Tensor x) -> Tensor" in str(
        torch.ops.my_ops.relu_backward.default._schema)


# a new user's find: one parameter named with a Python keyword renamed every one arg0...
@check("a parameter named with a Python keyword is called in_; the others keep their names")
def _():
    custom_op.load_library(lib("edge/libedge.so"))
    assert "addk(Tensor x, float in_, float lambda_) -> Tensor" in str(
        torch.ops.edge.addk.default._schema)
    t = torch.tensor([1.0, -2.0])
    assert torch.equal(torch.ops.edge.addk(x=t, in_=3.0, lambda_=2.0), t + 6.0)
    assert torch.equal(torch.ops.edge.addk(t, 3.0, lambda_=0.5), t + 1.5)
    # (a review's: self, which torch.ops takes for itself, and in, whose in_ is another's)
    assert "addk2(Tensor self_, float in_, float arg2) -> Tensor" in str(
        torch.ops.edge.addk2.default._schema)
    assert torch.equal(torch.ops.edge.addk2(self_=t, in_=3.0, arg2=2.0), t + 6.0)


UNNAMED_K = """#include <torch/torch.h>
torch::Tensor scaled(const torch::Tensor &x, double, double factor)
{
    return torch::mul(x, factor);
}
"""
UNNAMED_S = """#include <torch/torch.h>
#include <torchneuron/register.h>
torch::Tensor scaled_shape(const torch::Tensor &x, double, double)
{
    return torch::empty(x.sizes(), torch::kFloat);
}
NEURON_LIBRARY(unnamed_ops, m) { m.def("scaled", &scaled_shape, "scaled"); }
"""


def small_library(top, namespace):
    """Writes UNNAMED_K and UNNAMED_S (its ops in namespace) into the folder top; the
    custom_op.load arguments that build them there."""
    for name, text in (("k.cpp", UNNAMED_K),
                       ("s.cpp", UNNAMED_S.replace("unnamed_ops", namespace))):
        with open(os.path.join(top, name), "w") as f:
            f.write(text)
    return dict(compute_srcs=[os.path.join(top, "k.cpp")],
                shape_srcs=[os.path.join(top, "s.cpp")], build_directory=top)


# a Python user's find: with SIGCHLD ignored, the build's status read as 0 and a failed
# build loaded the library of the one before, silently
@check("a script that ignores SIGCHLD still gets a failed build as BuildError")
def _():
    with tempfile.TemporaryDirectory() as top:
        args = small_library(top, "sigchld_ops")
        custom_op.load(name="sigchld", **args)
        with open(args["compute_srcs"][0], "a") as f:
            f.write("this is not C++\n")
        old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        try:
            raises(neuronop.BuildError, custom_op.load, name="sigchld", **args)
            assert signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN
        finally:
            signal.signal(signal.SIGCHLD, old)


# a Python user's find: one parameter left unnamed (an unused double) made every parameter
# argN, so f(x=...) failed
@check("a parameter left unnamed is argN; its neighbours keep their names")
def _():
    with tempfile.TemporaryDirectory() as top:
        custom_op.load(name="unnamed", **small_library(top, "unnamed_ops"))
        assert "scaled(Tensor x, float arg1, float factor) -> Tensor" in str(
            torch.ops.unnamed_ops.scaled.default._schema), torch.ops.unnamed_ops.scaled.default
        t = torch.tensor([1.0, -2.0])
        assert torch.equal(torch.ops.unnamed_ops.scaled(x=t, arg1=0.0, factor=3.0), t * 3.0)
        from neuronop import _client
        described = subprocess.run([_client.neuronop_binary(), "inspect",
                                    os.path.join(top, "libunnamed.so")],
                                   stdout=subprocess.PIPE, text=True, check=True)
        assert '"argnames": ["x", "", "factor"]' in described.stdout, described.stdout


# ... and one whose build saw the other rewrite the manifest: the build installs nothing
# (exit 2), and load says why in a load's words (a reviewer's: it said only "changed")
@check("a load whose manifest another load rewrites during its build raises BuildError")
def _():
    from neuronop import custom_op as loader
    with tempfile.TemporaryDirectory() as top:
        args = small_library(top, "rewritten_ops")
        real_build, done = loader._build, threading.Event()

        def rewrite(manifest):   # the other process, over and over, until the build ends
            n = 0
            while not done.is_set():
                n += 1
                with open(manifest, "a") as f:
                    f.write("# %d\n" % n)
                time.sleep(0.002)

        def raced(manifest, *rest):
            other = threading.Thread(target=rewrite, args=(manifest,))
            other.start()
            try:
                return real_build(manifest, *rest)
            finally:
                done.set()
                other.join()

        loader._build = raced
        try:
            e = raises(neuronop.BuildError, custom_op.load, name="rewritten", **args)
        finally:
            loader._build = real_build
        assert "its manifest or sources changed during the build" in str(e), e
        assert not os.path.exists(os.path.join(top, "librewritten.so"))


# a reviewer's find: an op named 'name' is torch.ops.NS.name, the namespace object's own
# attribute, which the Autograd kernel's redispatch found instead of the op
@check("an op named like torch.ops' own attribute ('name') is refused with InputError")
def _():
    with tempfile.TemporaryDirectory() as top:
        args = small_library(top, "named_ops")
        with open(os.path.join(top, "s.cpp")) as f:
            shape = f.read().replace('m.def("scaled"', 'm.def("name"')
        with open(os.path.join(top, "s.cpp"), "w") as f:
            f.write(shape)
        e = raises(neuronop.InputError, custom_op.load, name="named", **args)
        assert "has a name torch.ops keeps for its own" in str(e), e


# a red team's find: two processes loading one library into one build_directory with
# different extra_cflags each rewrite the manifest there, and each builds whichever came
# last: one ran the other's code.  The interleaving, made here: the other process's manifest
# written between this load's and its build
@check("a library built with another load's arguments meanwhile raises BuildError, not runs")
def _():
    from neuronop import custom_op as loader
    with tempfile.TemporaryDirectory() as top:
        args = dict(name="raced", **small_library(top, "raced_ops"))
        real_build = loader._build

        def other_process_first(manifest, *rest):
            with open(manifest) as f:
                text = f.read()
            with open(manifest, "w") as f:
                f.write(text.replace('extra_cflags: ["-DMINE"]', 'extra_cflags: ["-DTHEIRS"]'))
            return real_build(manifest, *rest)

        loader._build = other_process_first
        try:
            e = raises(neuronop.BuildError, custom_op.load, extra_cflags=["-DMINE"], **args)
        finally:
            loader._build = real_build
        assert "another custom_op.load of 'libraced.so' into the same build_directory" in \
            str(e) and "['-DTHEIRS']" in str(e), e
        assert not hasattr(torch.ops.raced_ops, "scaled")
        custom_op.load(extra_cflags=["-DMINE"], **args)   # alone, it builds and loads
        assert hasattr(torch.ops.raced_ops, "scaled")


@check("torch refuses arguments of the wrong type or number")
def _():
    for bad in (("a",), (x, x), (1.5,)):
        try:
            torch.ops.my_ops.relu_forward(*bad)
        except RuntimeError as e:
            assert not isinstance(e, neuronop.Error), e
        else:
            raise AssertionError("%r was accepted" % (bad,))


@check("a float64 input is refused with a message naming the argument")
def _():
    e = raises(neuronop.InputError, torch.ops.my_ops.relu_forward, x.double())
    assert "argument 'x'" in str(e) and "float64" in str(e), e
    assert str(e).startswith("neuronop: my_ops::relu_forward: error:"), e


@check("a tensor of a shape the device cannot have is refused")
def _():
    e = raises(neuronop.InputError, torch.ops.my_ops.relu_forward, torch.ones([1] * 9))
    assert "9 dimensions" in str(e), e
    e = raises(neuronop.InputError, torch.ops.my_ops.relu_forward, torch.ones(1, 1, 1, 1, 70000))
    assert "over 65535 only up to 4-D" in str(e), e
    # (a new user's find: it named neither the op nor the argument)
    assert e.where == "my_ops::relu_forward" and "argument 1: " in str(e), e
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("an input that needs grad is refused outside autograd, accepted under no_grad")
def _():
    xr = x.clone().requires_grad_()
    e = raises(neuronop.InputError, torch.ops.my_ops.relu_forward, xr)
    assert "requires grad" in str(e), e
    with torch.no_grad():
        assert torch.equal(torch.ops.my_ops.relu_forward(xr), torch.relu(x))


# a new user's find: a double backward through the tutorials' Function was told to call the
# op from a Function, where it already was
@check("a second derivative through a Function's backward says once_differentiable")
def _():
    def function(once):
        def backward(ctx, g):
            return torch.ops.my_ops.relu_backward(g, ctx.saved_tensors[0])

        class Relu(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return torch.ops.my_ops.relu_forward(t)
        Relu.backward = staticmethod(
            torch.autograd.function.once_differentiable(backward) if once else backward)
        return Relu

    xr = x.clone().requires_grad_()
    (gx,) = torch.autograd.grad(torch.relu(xr).sum(), xr, create_graph=True)
    e = raises(neuronop.InputError, torch.autograd.grad, function(False).apply(xr).sum(), xr,
               create_graph=True)
    assert "create_graph=True" in str(e) and "once_differentiable" in str(e), e
    (got,) = torch.autograd.grad(function(True).apply(xr).sum(), xr, create_graph=True)
    assert torch.equal(got, gx), (got, gx)


# a new user's find: under functorch the op's CPU kernel saw the tensors unwrapped, which
# need no grad there, and the gradients through the op were silently zero
@check("tensors functorch or forward-mode AD differentiate are refused, not given zero grads")
def _():
    import functorch
    from torch.autograd import forward_ad
    op = torch.ops.my_ops.relu_forward
    e = raises(neuronop.InputError, functorch.grad(lambda a: op(a).sum()), x)
    assert "requires grad" in str(e), e
    raises(neuronop.InputError, functorch.jacrev(op), x)
    with forward_ad.dual_level():
        e = raises(neuronop.InputError, op, forward_ad.make_dual(x, torch.ones_like(x)))
        assert "forward-mode tangent" in str(e), e
    assert torch.equal(op(x), torch.relu(x))   # and the op works on after them


# a Python user's find: the op's Autograd kernel ran the CPU kernel itself, so make_fx and
# aot_function traced its copies into and out of the arena, and the graph replayed the first
# input's result; a dispatch mode saw those copies, a meta tensor got a copy_ error
@check("tracing records the op itself: make_fx's graph computes each new input's answer")
def _():
    from functorch.compile import aot_function, nop
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.utils._python_dispatch import TorchDispatchMode
    op = torch.ops.my_ops.relu_forward
    x1, x2 = torch.tensor([-1.0, 2.0, 3.0]), torch.tensor([5.0, -6.0, 7.0])
    graph = make_fx(lambda a: op(a) * 2)(x1)
    assert "my_ops.relu_forward" in graph.code, graph.code
    assert torch.equal(graph(x2), torch.relu(x2) * 2), graph(x2)
    traced = aot_function(lambda a: op(a) * 2, fw_compiler=nop)
    traced(x1)
    assert torch.equal(traced(x2), torch.relu(x2) * 2)

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Seen() as seen:
        got = op(x2)
    assert seen.ops == ["my_ops.relu_forward.default"], seen.ops
    assert torch.equal(got, torch.relu(x2))
    for other in (torch.empty(3, device="meta"), x2.to_sparse()):
        e = raises(NotImplementedError, op, other)
        assert "Could not run 'my_ops::relu_forward'" in str(e), e


# a new user's find: the arena's views (and a new arena) made by a first call under
# inference_mode were inference tensors, which every later call outside it copied into
@check("calls made first under torch.inference_mode work outside it afterwards")
def _():
    small, large = torch.randn(7, 13), torch.randn(1000, 1000)   # a new plan; a new arena
    with torch.inference_mode():
        for t in (small, large):
            y = torch.ops.my_ops.relu_forward(t)
            assert y.is_inference() and torch.equal(y, torch.relu(t))
    for t in (small, large):
        y = torch.ops.my_ops.relu_forward(t)
        assert not y.is_inference() and torch.equal(y, torch.relu(t))


@check("a non-contiguous input gives torch.relu's values")
def _():
    t = x.t()
    assert not t.is_contiguous()
    y = torch.ops.my_ops.relu_forward(t)
    assert y.shape == t.shape and torch.equal(y, torch.relu(t))


@check("an int32 input reaches the kernel, whose float accessor the device refuses")
def _():
    e = raises(neuronop.DeviceError, torch.ops.my_ops.relu_forward,
               torch.ones(4, 4, dtype=torch.int32))
    assert "relu_forward" in str(e) and "core 0" in str(e), e


@check("training with the device relu: the loss equals torch.relu's at every step")
def _():
    here = os.getcwd()
    os.chdir(MLP)   # my_ops.py loads librelu.so from the current folder, as the tutorial's
    sys.path.insert(0, MLP)
    try:
        import model
    finally:
        os.chdir(here)
    ours, _ = model.train(12)
    theirs, _ = model.train(12, relu=torch.relu)
    assert ours == theirs, (ours, theirs)
    assert ours[-1] < ours[0], ours


@check("loading a library twice is harmless")
def _():
    a = custom_op.load_library(os.path.join(MLP, "librelu.so"))
    b = custom_op.load_library(os.path.join(MLP, "librelu.so"))
    assert a is b and a.namespace == "my_ops", (a, b)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))
    # its path as bytes is the same file (a Python tester's find: a clash with itself)
    c = custom_op.load_library(os.fsencode(os.path.join(MLP, "librelu.so")))
    assert c is a, (c, a)


@check("loading a library again and again holds one supervisor slot: it never runs out")
def _():
    # a notebook's cell run again, or a load in a loop: the supervisor has room for 256
    # libraries, and each load took one, the same library's too
    from neuronop import _client
    pid = _client.supervisor().pid()
    for _ in range(300):
        custom_op.load_library(os.path.join(MLP, "librelu.so"))
    assert _client.supervisor().pid() == pid   # (one supervisor took every load)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("load_library registers a C library under its own name")
def _():
    custom_op.load_library(lib("crash/librules_crash.so"))
    custom_op.load_library(lib("access/librules_access.so"))
    custom_op.load_library(lib("hostile/libhostile.so"))
    assert hasattr(torch.ops.rules_crash, "segv")


@check("a multicore op on 8 cores gives torch.relu's values")
def _():
    custom_op.load_library(lib("relu_multicore/librelu_multicore.so"))
    big = torch.randn(33, 1000)
    assert torch.equal(torch.ops.relu_multicore.relu_forward(big), torch.relu(big))


@check("calls whose shapes, dtypes and scalars change from call to call get their own answers")
def _():
    custom_op.load_library(lib("softclip/libsoftclip.so"))
    custom_op.load_library(lib("tlib/libtlib.so"))
    shapes = [(64, 120), (3,), (), (120, 64), (1, 2, 3, 4), (3,)]
    for _ in range(2):   # the second round finds each call's layout made by the first
        for shape in shapes:
            t, u = torch.randn(shape), torch.randn(shape)
            assert torch.equal(torch.ops.my_ops.relu_forward(t), torch.relu(t)), shape
            want = torch.where(t > 0, u, torch.zeros_like(u))
            assert torch.equal(torch.ops.my_ops.relu_backward(u, t), want), shape
        for n, m in ((2, 3), (3, 2), (5, 5), (1, 7)):   # int64 arguments; the output's size
            want = torch.eye(n, m, dtype=torch.int32) * 7
            assert torch.equal(torch.ops.tlib.eye(n, m), want), (n, m)
        for limit, alpha in ((0.0, 2), (0, 0.5), (0.0, 3), (0.0, -1.5)):   # Scalar: int or float
            want = torch.add(torch.clamp(torch.exp(x), 0, limit), x, alpha=alpha)
            assert torch.equal(torch.ops.softclip.softclip(x, limit, alpha), want), alpha


def cli_diagnostic(name):
    """What `neuronop run` printed on standard error for the op `name` with the same input
    (t0601 ran it into NEURONOP_TEST_CLI): the diagnostic, without the closing count."""
    with open(os.path.join(CLI, name)) as f:
        lines = f.read().splitlines()
    # (under AddressSanitizer its warnings, ==PID==..., are on the command line's too)
    return "\n".join(line for line in lines if not line.startswith("neuronop: device checks:")
                     and not re.match(r"==\d+==", line))


def fails_as(cls, kind, op, name, *args):
    """op(*args) raises exactly cls, of that kind, with the command line's diagnostic for
    the same run as its message; the next call works."""
    e = raises(cls, op, *args)
    assert isinstance(e, neuronop.DeviceError) and isinstance(e, RuntimeError), type(e)
    assert e.kind == kind, (e.kind, kind)
    want = cli_diagnostic(name)
    assert str(e) == want, "\n%s\n  is not the command line's\n%s" % (e, want)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))
    return e


@check("a broken device rule raises DeviceError with the command line's diagnostic")
def _():
    e = fails_as(neuronop.DeviceError, "rule", torch.ops.rules_access.tcm_past_end,
                 "tcm_past_end", torch.ones(16))
    assert e.where == "tcm_past_end: core 0", e.where
    fails_as(neuronop.DeviceError, "rule", torch.ops.rules_crash.aborts, "aborts",
             torch.ones(4))


@check("a crashing kernel raises CrashError with the command line's diagnostic")
def _():
    fails_as(neuronop.CrashError, "crash", torch.ops.rules_crash.segv, "segv", torch.ones(4))


@check("a kernel that overflows its stack raises StackOverflowError, a CrashError")
def _():
    e = fails_as(neuronop.StackOverflowError, "stack", torch.ops.rules_crash.wide_frame,
                 "wide_frame", torch.ones(4))
    assert isinstance(e, neuronop.CrashError), type(e)


@check("a forbidden system call raises ForbiddenError with the call named")
def _():
    for name in ("forks", "creates"):
        fails_as(neuronop.ForbiddenError, "syscall", getattr(torch.ops.hostile, name), name,
                 torch.ones(4))


@check("a kernel that ends or breaks its worker raises WorkerError, a CrashError")
def _():
    # a memset over the runtime's memory wrecks the worker, which ends as the wreck goes
    # on (a signal, a trapped call); under the sanitizers they all do (t0208)
    for name in ("wild_memset",) + (("exits", "shape_forges") if SANITIZED else ()):
        e = raises_kind_of(neuronop.DeviceError, getattr(torch.ops.hostile, name),
                           torch.ones(4))
        assert (e.where + ":").startswith(name + ":"), e
        assert SANITIZED or isinstance(e, (neuronop.CrashError, neuronop.ForbiddenError)), e
        assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))
    if SANITIZED:
        return
    for name in ("exits", "shape_forges"):
        e = fails_as(neuronop.WorkerError, "worker", getattr(torch.ops.hostile, name), name,
                     torch.ones(4))
        assert isinstance(e, neuronop.CrashError), type(e)


# a red team's find: a DONE record alone, with no output, was taken for a result, and the
# supervisor crashed on its missing output
@check("a worker's forged DONE without an output raises WorkerError; the supervisor goes on")
def _():
    custom_op.load_library(lib("forgedout/libforgedout.so"))
    e = raises(neuronop.WorkerError, torch.ops.forgedout.fwd_done, torch.zeros(4))
    assert "malformed report" in str(e), e
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("each call starts from the library's loaded state: nothing an earlier call left")
def _():
    # keptstate's shape functions leave a global, heap, a handler, a descriptor, a mapping and
    # a moved heap end, each marked with the input's length, and declare one element more
    # (which the call refuses) when they find another call's mark
    custom_op.load_library(lib("keptstate/libkeptstate.so"))
    for name in ("globals", "handler", "fds", "maps", "heap_end", "tcm"):
        for n in (1, 2, 3, 1):
            got = getattr(torch.ops.keptstate, name)(torch.zeros(n))
            want = torch.zeros(n) if name == "tcm" else torch.ones(n)
            assert torch.equal(got, want), (name, n, got)


@check("a call its worker did not answer raises; the next gets a fresh worker")
def _():
    # once ends a worker that was put back after an earlier call (the test above left the
    # library's): that call fails, and is not sent again to a fresh worker, where it would
    # pass; the next call gets one, and the one after finds it put back (under the
    # sanitizers no worker is put back, and every call passes)
    once = torch.ops.keptstate.once
    for attempt in range(3):
        if SANITIZED or attempt == 1:
            assert torch.equal(once(torch.zeros(2)), torch.ones(2)), attempt
            continue
        e = raises(neuronop.WorkerError, once, torch.zeros(2))
        assert e.kind == "worker" and \
            "user code ended the device process (exit status 0)" in str(e), e


@check("a call with a tensor of huge pages leaves its worker to be put back")
def _():
    # its output is 512 KiB, which takes huge pages (lib/base/hostmem.c): advising them on the
    # kept worker's heap split the heap's mapping, the restore found the layout changed and
    # ended the worker, and every such call paid for a fresh one (5 times slower).  Put back,
    # the worker ends at once (above); fresh, once passes
    big = torch.zeros(32 * 4096)
    assert torch.equal(torch.ops.keptstate.globals(big), torch.ones(32 * 4096))
    once = torch.ops.keptstate.once
    if SANITIZED:
        assert torch.equal(once(torch.zeros(2)), torch.ones(2))
        return
    e = raises(neuronop.WorkerError, once, torch.zeros(2))
    assert "user code ended the device process (exit status 0)" in str(e), e


STDOUT_RO = """
import sys, torch
from neuronop import custom_op
custom_op.load_library(sys.argv[1])
for attempt in range(3):
    got = torch.ops.keptstate.stdout_ro(torch.zeros(2))
    assert torch.equal(got, torch.ones(2)), (attempt, got)
"""


SECOND_INTERRUPT = """
import os, signal, sys, threading, time, torch
from neuronop import custom_op
custom_op.load_library(sys.argv[1])
custom_op.load_library(sys.argv[2])
after_close = sys.argv[3] == "after-close"

def arm(frame, event, arg):      # the first Ctrl-C, while the call waits for its reply
    if event == "c_call" and getattr(arg, "__name__", "") == "recv_into":
        sys.setprofile(None)
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()

def second(frame, event, arg):   # the second, as the first one's clean-up starts (or just
    if after_close:              # after it closed the socket)
        hit = event == "c_return" and getattr(arg, "__name__", "") == "close" and \\
            frame.f_code.co_name == "_real_close"
    else:
        hit = event == "call" and frame.f_code.co_name == "_stop" and \\
            "neuronop" in frame.f_code.co_filename
    if hit:
        sys.setprofile(None)
        os.kill(os.getpid(), signal.SIGINT)

def first(sig, frame):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.setprofile(second)
    raise KeyboardInterrupt

signal.signal(signal.SIGINT, first)
sys.setprofile(arm)
try:
    torch.ops.rules_crash.spin(torch.ones(4))   # answered at its --timeout (1 s)
except KeyboardInterrupt:
    pass
else:
    sys.exit("the call was not interrupted")
time.sleep(1.5)   # its answer has come by now
for i in range(3):
    x = torch.randn(4)
    got = torch.ops.my_ops.relu_forward(x)
    assert torch.equal(got, torch.relu(x)), (i, got)
"""


# a Python user's find: a second Ctrl-C as the first one's clean-up began left the socket
# open with the interrupted call's reply coming, which answered the next call, and every
# call after got the one before's; one just after the close left a closed socket in use
@check("a second Ctrl-C in an interrupted call's clean-up: the calls after get their own answers")
def _():
    for where in ("before-close", "after-close"):
        done = subprocess.run([sys.executable, "-c", SECOND_INTERRUPT,
                               lib("crash/librules_crash.so"), os.path.join(MLP, "librelu.so"),
                               where], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)
        assert done.returncode == 0, (where, done.stdout + done.stderr)


@check("a call that leaves its standard output read-only leaves the next call a writable one")
def _():
    # stdout_ro's shape function closes descriptor 1 (the worker's /dev/null, read and
    # written) and opens /dev/null again read-only, which it may where there is no Landlock
    # (a process of its own, with NEURONOP_LANDLOCK=off): the same file, so the worker was
    # put back with it so, and the next call's writes to its standard output failed (the
    # shape function then declares one element more, which the call refuses).  The worker is
    # ended instead, and every call passes
    env = dict(os.environ, NEURONOP_LANDLOCK="off")
    done = subprocess.run([sys.executable, "-c", STDOUT_RO, lib("keptstate/libkeptstate.so")],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@check("a kernel or shape function that never ends raises TimeoutError after --timeout")
def _():
    e = raises(neuronop.TimeoutError, torch.ops.rules_crash.spin, torch.ones(4))
    assert e.kind == "timeout" and e.where == "spin: core 0", (e.kind, e.where)
    assert str(e).startswith("neuronop: spin: core 0: error: timeout: the kernel ran for more "
                             "than 1 s and was stopped\n"), e
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))
    e = raises(neuronop.TimeoutError, torch.ops.hostile.shape_spins, torch.ones(4))
    assert e.where == "shape_spins: shape function 'shape_spins'", e.where
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("a file that is not a library raises InputError with the command line's diagnostic")
def _():
    e = raises(neuronop.InputError, custom_op.load_library, os.path.join(CLI, "bogus.so"))
    assert e.kind == "input"
    want = cli_diagnostic("bogus").replace("'bogus.so'",
                                           "'%s'" % os.path.join(CLI, "bogus.so"))
    assert str(e) == want, "\n%s\n  is not the command line's\n%s" % (e, want)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


SPINNER = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
print(flush=True)
end = time.monotonic() + 0.1
while time.monotonic() < end:
    pass
"""


@contextlib.contextmanager
def cpu_held(cpu):
    """A process spinning on cpu (alone there) for 100 ms from the moment this enters."""
    spinner = subprocess.Popen([sys.executable, "-c", SPINNER, str(cpu)],
                               stdout=subprocess.PIPE)
    try:
        spinner.stdout.readline()   # it spins on cpu from now on
        yield
    finally:
        spinner.stdout.close()
        spinner.wait()


@check("a supervisor that died between calls is replaced by the next call, which works")
def _():
    from neuronop import _client
    sup = _client.supervisor()
    # the client notices a dead supervisor by the request it cannot deliver: a script that
    # gave SIGPIPE its default action must not die of it
    old = signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    cpu = max(os.sched_getaffinity(0))
    try:
        # killed just now (still dying), long gone, or killed and still waiting for a CPU to
        # die on when the request comes: a supervisor waiting in recvmsg then took the
        # request off the socket, and died with it unanswered, as if the call had killed it
        for pause, waits in ((0, False), (0.05, False), (0, True)):
            pid = sup.pid()
            held = contextlib.nullcontext()
            if waits:   # the lowest priority, on a CPU another process holds
                os.sched_setaffinity(pid, {cpu})
                os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
                held = cpu_held(cpu)
            with held:
                os.kill(pid, signal.SIGKILL)
                time.sleep(pause)
                assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))
            assert sup.pid() != pid
    finally:
        signal.signal(signal.SIGPIPE, old)


HANDLER = """
import signal, sys, torch, neuronop
from neuronop import custom_op
custom_op.load_library(sys.argv[1])
custom_op.load_library(sys.argv[2])
x = torch.randn(64, 120)
got = []
def handler(sig, frame):
    got.append(torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x)))
if sys.argv[3] == "alarm":
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.3)   # while the kernel spins (for --timeout 1)
else:   # Ctrl-C: the test sends SIGINT to this process's group, the supervisor's too
    signal.signal(signal.SIGINT, handler)
    print("ready", flush=True)
try:
    torch.ops.rules_crash.spin(torch.ones(4))
except neuronop.TimeoutError:
    print("spin: TimeoutError")
print("handler:", got)
print("after:", torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x)))
"""


@check("a signal handler that calls an op during another call gets its answer, as does the call")
def _():
    # the handler runs in the thread that waits for the spinning call's reply: it used to
    # wait for the lock that thread holds, for ever (a process of its own: a hang ends there)
    # (standard error apart: a sanitized neuronop's workers write warnings there)
    done = subprocess.run([sys.executable, "-c", HANDLER, os.path.join(MLP, "librelu.so"),
                           lib("crash/librules_crash.so"), "alarm"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.stdout.splitlines()[-3:] == ["spin: TimeoutError", "handler: [True]",
                                             "after: True"], done.stdout + done.stderr


NESTED = r"""
import signal, sys, torch, neuronop
from neuronop import custom_op
custom_op.load_library(sys.argv[1])
custom_op.load_library(sys.argv[2])
x = torch.randn(64, 120)
def handler(sig, frame):   # a call of 10 ms or more, every 2 ms
    try:
        torch.ops.edge.says(torch.ones(4), 9)
    except neuronop.SupervisorError:
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise
signal.signal(signal.SIGALRM, handler)
signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
try:
    for _ in range(1000):
        torch.ops.edge.says(torch.ones(4), 9)
    print("nothing raised")
except neuronop.SupervisorError as e:
    print("raised:", "while 4 calls it interrupted were under way" in str(e))
print("after:", torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x)))
"""


# a new user's find: a handler on a 1 ms timer started a supervisor per nested call, each
# start interrupted again, dozens deep: RecursionError, closed arenas, once a segfault
@check("calls from a signal handler that interrupt each other stop 4 deep, with a clear error")
def _():
    done = subprocess.run([sys.executable, "-c", NESTED, os.path.join(MLP, "librelu.so"),
                           lib("edge/libedge.so")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == ["raised: True", "after: True"], \
        done.stdout + done.stderr


@check("Ctrl-C with the script's own SIGINT handler leaves the call it interrupts running")
def _():
    # the terminal sends SIGINT to its foreground process group, where the supervisor and
    # its workers are too: they died of it, and the call raised SupervisorError, although
    # the script had chosen to go on (a training loop that finishes its step, say)
    child = subprocess.Popen([sys.executable, "-c", HANDLER, os.path.join(MLP, "librelu.so"),
                              lib("crash/librules_crash.so"), "group"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.3)   # the kernel spins now (for --timeout 1)
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert out.splitlines()[-3:] == ["spin: TimeoutError", "handler: [True]", "after: True"], \
        out + err


CLOSER = """
import os, signal, sys, torch
from neuronop import _client, custom_op
custom_op.load_library(sys.argv[1])
x = torch.randn(64, 120)
got = []
def handler(sig, frame):
    got.append(torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x)))
torch.ops.my_ops.relu_forward(x)
sup = _client.supervisor()
os.kill(sup.pid(), signal.SIGSTOP)   # slow to end: close waits for it (then kills it)
signal.signal(signal.SIGALRM, handler)
signal.setitimer(signal.ITIMER_REAL, 0.3)
sup.close()
me = str(os.getpid())
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open("/proc/%s/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[1] == me:
                left.append(pid)
    except OSError:
        pass
print("handler:", got)
print("left:", left)
"""


@check("a signal handler's call during close() leaves no supervisor behind it")
def _():
    # the handler's call started a new supervisor while close waited for the old one to
    # end, and close then dropped it, running and never waited for
    done = subprocess.run([sys.executable, "-c", CLOSER, os.path.join(MLP, "librelu.so")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=60)
    assert done.stdout.splitlines()[-2:] == ["handler: [True]", "left: []"], \
        done.stdout + done.stderr


@check("a supervisor that dies during a call raises SupervisorError; the next call works")
def _():
    from neuronop import _client
    # the supervisor has the library before the timer starts, so the kill finds it running
    # the call, not between the library's load and the call (which a new one would run)
    custom_op.load_library(lib("crash/librules_crash.so"))
    pid = _client.supervisor().pid()
    killer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
    killer.start()   # while the kernel spins (for --timeout 1)
    try:
        e = raises(neuronop.SupervisorError, torch.ops.rules_crash.spin, torch.ones(4))
    finally:
        killer.join()
    assert "stopped answering" in str(e), str(e)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("forked children (DataLoader workers) call ops beside their parent, each its own")
def _():
    torch.ops.my_ops.relu_forward(x)   # the parent's supervisor and arena exist at the fork
    children = []
    for k in range(1, 3):
        pid = os.fork()
        if pid == 0:   # the child: its values, many calls while the parent makes its own
            status = 1
            try:
                y = x * k
                status = 0 if all(torch.equal(torch.ops.my_ops.relu_forward(y), torch.relu(y))
                                  for _ in range(40)) else 3
                neuronop._client.supervisor().close()
            finally:
                os._exit(status)
        children.append(pid)
    same = all(torch.equal(torch.ops.my_ops.relu_forward(-x), torch.relu(-x))
               for _ in range(40))
    statuses = [os.waitpid(pid, 0)[1] for pid in children]
    assert same, "the parent got values that were not its own"
    assert statuses == [0, 0], statuses


@check("a child forked while another thread loads a library loads its own")
def _():
    # the thread holds the registry's lock while the supervisor reads the library: a fork
    # then gave the child a lock held by a thread it does not have, and the child's own
    # load waited for ever (its alarm ends it)
    path = os.path.join(MLP, "librelu.so")
    stop = threading.Event()

    def loading():
        while not stop.is_set():
            custom_op.load_library(path)
    thread = threading.Thread(target=loading)
    thread.start()
    statuses = []
    try:
        for _ in range(8):
            time.sleep(0.01)
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    signal.alarm(3)
                    custom_op.load_library(path)
                    status = 0 if torch.equal(torch.ops.my_ops.relu_forward(x),
                                              torch.relu(x)) else 3
                    neuronop._client.supervisor().close()
                finally:
                    os._exit(status)
            statuses.append(os.waitpid(pid, 0)[1])
            if statuses[-1]:
                break
    finally:
        stop.set()
        thread.join()
    assert statuses == [0] * 8, statuses


@check("a child forked during another thread's call has a supervisor of its own")
def _():
    # the parent's socket has a request in flight at the fork: the child's calls must not
    # go on it (they would read the spinning call's reply, or it theirs)
    custom_op.load_library(lib("crash/librules_crash.so"))
    got = []

    def spinning():
        got.append(raises(neuronop.TimeoutError, torch.ops.rules_crash.spin, torch.ones(4)))
    thread = threading.Thread(target=spinning)
    thread.start()
    time.sleep(0.3)   # the kernel spins now (for --timeout 1)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            signal.alarm(5)
            status = 0 if torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x)) else 3
            neuronop._client.supervisor().close()
        finally:
            os._exit(status)
    status = os.waitpid(pid, 0)[1]
    thread.join()
    assert status == 0 and len(got) == 1, (status, got)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


class Batches(torch.utils.data.Dataset):
    """Items made by the op in DataLoader workers; item `bad` by a crashing kernel."""

    def __init__(self, bad=None):
        self.bad = bad

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == self.bad:
            torch.ops.rules_crash.segv(torch.ones(4))
        return torch.ops.my_ops.relu_forward(x * (i - 1.5))


@check("DataLoader workers call ops; a worker's failure reaches the loop as its class")
def _():
    loader = torch.utils.data.DataLoader(Batches(), batch_size=1, num_workers=2)
    for i, batch in enumerate(loader):
        assert torch.equal(batch[0], torch.relu(x * (i - 1.5))), i
    loader = torch.utils.data.DataLoader(Batches(bad=2), batch_size=1, num_workers=2)
    w = raises(neuronop.CrashError, lambda: list(loader))
    # torch 1.13's loader iterator, failed, is held by the traceback's frames in a cycle with
    # w; left to the garbage collector, it is freed after its queues and waits 5 s for each
    # worker.  Dropping the traceback frees it now, and its workers end at once.
    w.__traceback__ = None
    # pickled whole, as multiprocessing sends it: class, message and parts unchanged
    e = raises(neuronop.CrashError, torch.ops.rules_crash.segv, torch.ones(4))
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e) and str(again) == str(e), (str(again), str(e))
    assert (again.where, again.message, again.detail) == (e.where, e.message, e.detail)
    # torch makes the worker's error again from its traceback's text, calling its class
    # with torch's message (torch/_utils.py): the parts come through whole, and the message
    # is torch's, the worker's traceback ending in the diagnostic, and nothing more
    parts = ("where", "message", "detail", "file", "line", "col")
    assert [getattr(w, a) for a in parts] == [getattr(e, a) for a in parts], \
        ([getattr(w, a) for a in parts], [getattr(e, a) for a in parts])
    assert e.where == "segv: core 0", e.where
    assert str(w).startswith("Caught CrashError in DataLoader worker process "), str(w)
    assert str(w).rstrip("\n").endswith("neuronop.errors.CrashError: " + str(e)), str(w)
    again = pickle.loads(pickle.dumps(w))
    assert type(again) is type(w) and str(again) == str(w), (str(again), str(w))
    assert [getattr(again, a) for a in parts] == [getattr(w, a) for a in parts]
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("two libraries defining one op in one namespace are refused")
def _():
    custom_op.load_library(lib("twin_a/libtwin.so"))
    e = raises(neuronop.InputError, custom_op.load_library, lib("twin_b/libtwin.so"))
    assert "op 'twin::negate'" in str(e) and "already defined" in str(e), e
    assert torch.equal(torch.ops.twin.negate(x), -x)


@check("an op torch already has is refused")
def _():
    e = raises(neuronop.InputError, custom_op.load_library, lib("aten/libaten.so"))
    assert "aten::relu" in str(e) and "torch already has" in str(e), e
    assert torch.equal(torch.relu(x), x.clamp(min=0))


@check("a namespace torch reserves (prim) is refused with InputError, not a ValueError")
def _():
    e = raises(neuronop.InputError, custom_op.load_library, lib("prim/libprim.so"))
    assert "namespace 'prim'" in str(e) and "reserved by torch" in str(e), e
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("a namespace torch.ops has for its own (load_library, pyops) is refused with InputError")
def _():
    for name in ("load_library", "pyops"):
        e = raises(neuronop.InputError, custom_op.load_library,
                   lib("%s/lib%s.so" % (name, name)))
        assert "namespace '%s'" % name in str(e) and "torch.ops keeps" in str(e), e
    assert callable(torch.ops.load_library)
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


# a Python tester's find: the supervisor's description of a library in a folder whose name is
# not UTF-8 raised UnicodeDecodeError; custom_op.load wrote such a name into its manifest,
# whose YAML refused it as an invalid escape, named as the manifest's line
@check("a folder whose name is not UTF-8: load_library works, custom_op.load says why not")
def _():
    with tempfile.TemporaryDirectory() as top:
        folder = os.path.join(top, os.fsdecode(b"tl\xe9"))
        os.mkdir(folder)
        so = os.path.join(folder, "liblatin.so")
        shutil.copy(lib("latin/liblatin.so"), so)
        custom_op.load_library(so)
        assert torch.equal(torch.ops.latin.negate(x), -x)
        for name in ("relu.cpp", "shape.cpp"):
            shutil.copy(os.path.join(MLP, name), folder)
        e = raises(neuronop.InputError, custom_op.load, name="latin1", build_directory=top,
                   compute_srcs=[os.path.join(folder, "relu.cpp")],
                   shape_srcs=[os.path.join(folder, "shape.cpp")])
        assert e.message.startswith("custom_op.load's compute_srcs: '%s/tl\ufffd/relu.cpp' "
                                    "is not UTF-8 text" % top), e
        assert "custom_op.load_library" in e.detail, e


@check("an op whose name torch cannot take is refused, and nothing of its library defined")
def _():
    e = raises(neuronop.InputError, custom_op.load_library, lib("kw/libkw.so"))
    assert "op 'kw::global'" in str(e) and "rename the op" in str(e), e
    assert not hasattr(torch.ops.kw, "global"), "half a library was registered"
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("device warnings arrive through warnings.warn")
def _():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ops.rules_access.five_streams(torch.ones(8))
    texts = [str(w.message) for w in caught if issubclass(w.category, neuronop.DeviceWarning)]
    assert any("warning:" in t and "five_streams" in t for t in texts), texts


@check("a device warning points at the script's line that called the op")
def _():
    five = torch.ops.rules_access.five_streams
    calls = (lambda: five(torch.ones(8)), lambda: five.default(torch.ones(8)))
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        where = [(w.filename, w.lineno) for w in caught
                 if issubclass(w.category, neuronop.DeviceWarning)]
        line = call.__code__.co_firstlineno   # the lambdas' line: where each calls the op
        assert where and all(w == (__file__, line) for w in where), (where, __file__, line)


@check("a kernel's printf output is printed after the op")
def _():
    custom_op.load_library(lib("printf_debug/libprintf_debug.so"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        torch.ops.printf_debug.row_sums(torch.ones(2, 3))
    assert "row_sums: 2 x 3" in out.getvalue(), out.getvalue()


# a Python tester's find: with sys.stdout None (python's when descriptor 1 is closed) the op
# raised AttributeError and its result was lost; print() writes nothing then
@check("a kernel's printf output is dropped, as print's is, when sys.stdout is None")
def _():
    custom_op.load_library(lib("printf_debug/libprintf_debug.so"))
    with contextlib.redirect_stdout(None):
        got = torch.ops.printf_debug.row_sums(torch.ones(2, 3))
        print("dropped too")
    assert torch.equal(got, torch.full((2,), 3.0)), got


# a new user's find: the printf text was written after the warnings, and lost when a filter
# made one an exception
@check("a kernel's printf output is printed when a warning filter raises")
def _():
    custom_op.load_library(lib("edge/libedge.so"))
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("error", neuronop.DeviceWarning)
        e = raises(neuronop.DeviceWarning, torch.ops.edge.says, torch.ones(2), 7)
    assert "TCM" in str(e), e
    assert "says: before failing 7" in out.getvalue(), out.getvalue()


@check("a float scalar reaches the kernel as given: -0.0 and 0.0 apart, NaN's plan kept")
def _():
    custom_op.load_library(lib("edge/libedge.so"))
    t = torch.tensor([1.0, -2.0, 0.0, 2.5])
    nan = float("nan")
    # each sign after the other: 0.0 == -0.0, but x / 0.0 is not x / -0.0
    for s in (-0.0, 0.0, -0.0, nan, 0.0, nan, 1, 1.0, True, -0.0):
        torch.testing.assert_close(torch.ops.edge.divs(t, s), torch.div(t, s), rtol=0, atol=0,
                                   equal_nan=True, msg=lambda m: "x / %r: %s" % (s, m))
    # NaN equals nothing, not even itself: its calls must still find the plan made for them
    sup = neuronop._client.supervisor()
    torch.ops.edge.divs(t, nan)
    before = len(sup._plans)
    for _ in range(3):
        torch.ops.edge.divs(t, nan)
    assert len(sup._plans) == before, (before, len(sup._plans))


@check("a complex Scalar, which torch's schema lets through, is refused naming the argument")
def _():
    custom_op.load_library(lib("edge/libedge.so"))
    e = raises(neuronop.InputError, torch.ops.edge.divs, torch.ones(2), 1j)
    assert "argument 's'" in str(e) and "is complex, which the device does not have" in str(e), e


@check("load_library of a missing file and load's arguments of the wrong type are named")
def _():
    e = raises(neuronop.InputError, custom_op.load_library, "/nonexistent/libgone.so")
    assert "'/nonexistent/libgone.so': no such library file; build it first" in str(e), e
    # a relative path says where it was looked for (a new user ran a script from elsewhere)
    e = raises(neuronop.InputError, custom_op.load_library, "libgone.so")
    assert ("'libgone.so': no such library file (a relative path is read from the current "
            "folder, '%s'); build it first (custom_op.load), or give its path" % os.getcwd()
            ) in str(e), e
    e = raises(neuronop.InputError, custom_op.load_library, MLP)   # (a new user's find)
    assert "'%s' is a folder: give the library file built in it" % MLP in str(e), e
    srcs = dict(compute_srcs=[os.path.join(MLP, "relu.cpp")],
                shape_srcs=[os.path.join(MLP, "shape.cpp")])
    for args, said in ((dict(name=""), "custom_op.load: name must be a non-empty str"),
                       (dict(name="n", compute_srcs=[3]),
                        "custom_op.load: compute_srcs must be paths (str), not int"),
                       (dict(name="n", extra_cflags="-O3"),
                        "custom_op.load: extra_cflags must be a list of str")):
        e = raises(TypeError, custom_op.load, **dict(srcs, **args))
        assert str(e) == said, e


@check("a failing kernel's printf output is printed before its exception is raised")
def _():
    for how, cls in ((1, neuronop.DeviceError), (2, neuronop.CrashError),
                     (3, neuronop.DeviceError)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            raises(cls, torch.ops.edge.says, torch.ones(4), how)
        assert out.getvalue() == "says: before failing %d\n" % how, (how, out.getvalue())
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("a kernel's printf output survives its worker's death, here as in neuronop run")
def _():
    # the text came with the run's records, which a worker that dies never sends: the
    # command line lost it too
    for how in (4, 5):   # exit_group(3), then SIGKILL: the worker dies right after printf
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            raises(neuronop.WorkerError, torch.ops.edge.says, torch.ones(4), how)
        assert out.getvalue() == "says: before failing %d\n" % how, (how, out.getvalue())
        cli = subprocess.run([neuronop._client.neuronop_binary(), "run",
                              lib("edge/libedge.so"), "says", "ones:4", str(how)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert cli.returncode == 1, (cli.returncode, cli.stderr)
        assert "kernel printf output:\nsays: before failing %d\n" % how in cli.stdout, \
            cli.stdout + cli.stderr
    # more than the device's buffer: its last 32 KB, and a warning that older text was lost
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raises(neuronop.WorkerError, torch.ops.edge.says, torch.ones(4), 6)
    text = "says: before failing 6\n" + "".join("line %04d of a long story\n" % i
                                                for i in range(2000))
    assert out.getvalue() == text[-32768:], out.getvalue()[:100]
    assert any("overflowed" in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


# a new user's find: a trapped call ended the run before its printf records were sent
@check("a kernel's printf output survives a system call the device does not have")
def _():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        e = raises(neuronop.ForbiddenError, torch.ops.edge.says, torch.ones(4), 8)
    assert "getppid" in str(e), e
    assert out.getvalue() == "says: before failing 8\n", out.getvalue()
    cli = subprocess.run([neuronop._client.neuronop_binary(), "run", lib("edge/libedge.so"),
                          "says", "ones:4", "8"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert cli.returncode == 1 and "getppid" in cli.stderr, (cli.returncode, cli.stderr)
    assert "kernel printf output:\nsays: before failing 8\n" in cli.stdout, \
        cli.stdout + cli.stderr
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("an output larger than the room set aside for it arrives whole, as do numbers")
def _():
    custom_op.load_library(lib("grow/libgrow.so"))
    y = torch.ops.grow.grow(3 << 20, 2.5)    # 12 MiB, after a 1 MiB arena
    assert y.shape == (3 << 20,) and torch.equal(y, torch.full((3 << 20,), 2.5)), y
    assert torch.equal(torch.ops.grow.grow(n=5, v=-1.0), torch.full((5,), -1.0))
    assert torch.equal(torch.ops.my_ops.relu_forward(x), torch.relu(x))


@check("an input larger than the worker's heap room arrives whole, and so does the next call's")
def _():
    big = torch.randn(9 << 18)   # 9 MiB: a kept worker keeps 8 MiB of heap for a call's inputs
    small = torch.randn(64, 120)
    for t in (big, small, big):   # the next call after one that outgrew the room, both ways
        assert torch.equal(torch.ops.my_ops.relu_forward(t), torch.relu(t)), t.shape


def mapped(pid, name):
    """The bytes of memfd name that process pid maps, as its /proc/PID/maps says."""
    total = 0
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            if "/memfd:%s " % name in line + " ":
                lo, hi = line.split()[0].split("-")
                total += int(hi, 16) - int(lo, 16)
    return total


@check("the memory a very large call needed goes back once calls are small again")
def _():
    from neuronop import _client
    sup = _client.supervisor()
    big = torch.randn(6 << 20)   # 24 MiB in, 24 MiB out
    assert torch.equal(torch.ops.my_ops.relu_forward(big), torch.relu(big))
    pid = sup.pid()
    held = {"neuronop-arena": (os.getpid(), pid), "neuronop-inputs": (pid,)}
    for name, pids in held.items():
        for p in pids:
            assert mapped(p, name) >= 24 << 20, (name, p, mapped(p, name))
    small = torch.randn(64, 120)
    for n in (63, 1):   # kept while calls may still be large, then not (64: the man page)
        for _ in range(n):
            assert torch.equal(torch.ops.my_ops.relu_forward(small), torch.relu(small))
        for name, pids in held.items():
            for p in pids:
                m = mapped(p, name)
                assert (m >= 24 << 20) if n > 1 else (m <= 2 << 20), (name, p, m, n)
    assert sup.pid() == pid
    assert torch.equal(torch.ops.my_ops.relu_forward(big), torch.relu(big))


# a review's find: the shrink closed the arena, then let go of it; an exception in between
# (a signal handler's, Ctrl-C) left the closed one in use, and every later call failed
@check("an exception as the arena shrinks leaves no closed arena in use")
def _():
    from neuronop import _client
    big, small = torch.randn(6 << 20), torch.randn(64, 120)
    assert torch.equal(torch.ops.my_ops.relu_forward(big), torch.relu(big))
    real = _client.Arena.close

    def close_then_interrupted(arena):
        real(arena)
        raise KeyboardInterrupt   # as if Ctrl-C came right after the close

    _client.Arena.close = close_then_interrupted
    try:
        interrupted = 0
        for _ in range(64):   # the 64th small call shrinks the arena
            try:
                torch.ops.my_ops.relu_forward(small)
            except KeyboardInterrupt:
                interrupted += 1
    finally:
        _client.Arena.close = real
    assert interrupted == 1, interrupted
    for t in (small, big, small):
        assert torch.equal(torch.ops.my_ops.relu_forward(t), torch.relu(t))


@check("an answered call is not failed by a smaller arena that cannot be made")
def _():
    from neuronop import _client
    big, small = torch.randn(6 << 20), torch.randn(64, 120)
    assert torch.equal(torch.ops.my_ops.relu_forward(big), torch.relu(big))
    for _ in range(63):
        torch.ops.my_ops.relu_forward(small)
    real = _client.Arena

    def no_memory(size):
        raise OSError(errno.ENOMEM, "no memory for the arena")
    _client.Arena = no_memory
    try:   # the 64th small call shrinks the arena, whose new one fails: after the answer
        assert torch.equal(torch.ops.my_ops.relu_forward(small), torch.relu(small))
    finally:
        _client.Arena = real
    assert torch.equal(torch.ops.my_ops.relu_forward(small), torch.relu(small))


@check("neuronop.stats() counts each op's calls and times")
def _():
    s = neuronop.stats()["my_ops::relu_forward"]
    assert s["calls"] >= 10 and s["host_seconds"] > 0, s
    assert "my_ops::relu_forward" in neuronop.format_stats()
    # a long op name widens the first column rather than push its row's figures right
    custom_op.load_library(lib("long/liba_library_with_a_long_name.so"))
    torch.ops.a_library_with_a_long_name.negate(x)
    table = neuronop.format_stats().splitlines()
    calls_end = table[0].index("calls") + len("calls")
    for row in table[1:]:
        m = re.match(r"neuronop: \S+ +\d+", row)
        assert m and m.end() == calls_end, "\n".join(table)


# a new user's find: a forked child's table counted its parent's calls before the fork
@check("a forked child counts its own calls, from none")
def _():
    before = neuronop.stats()["my_ops::relu_forward"]["calls"]
    assert before > 0
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: one call, then its count
        try:
            os.close(r)
            torch.ops.my_ops.relu_forward(x)
            os.write(w, b"%d" % neuronop.stats()["my_ops::relu_forward"]["calls"])
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        got = f.read()
    os.waitpid(pid, 0)
    assert got == "1", got
    assert neuronop.stats()["my_ops::relu_forward"]["calls"] == before


print("1..%d" % count)
sys.exit(1 if failed else 0)
