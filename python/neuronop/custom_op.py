"""Building and loading op libraries from Python, with the arguments of the real tool's
``torch_neuronx.xla_impl.custom_op``: ``load`` builds ``lib<name>.so`` with neuronop (an
incremental build: nothing changed, nothing compiled) and registers its ops; ``load_library``
registers the ops of a library built before.  The ops are then ``torch.ops.NAMESPACE.OP``,
NAMESPACE being NEURON_LIBRARY's (or, for a C library, the library's name).
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading

from . import _client, _ops, errors

__all__ = ["load", "load_library"]


_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")   # the build's (manifest.c)
_CXX = (".cpp", ".cc", ".cxx")                          # C++ sources, as the build has them


def _paths(what, value):
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    out = []
    for v in value:
        if not isinstance(v, (str, os.PathLike)):
            raise TypeError("custom_op.load: %s must be paths (str), not %s"
                            % (what, type(v).__name__))
        out.append(_utf8(what, os.path.abspath(os.fspath(v))))
    return out


def _utf8(what, text):
    """text, unless it is not UTF-8 (a name of bytes python decoded with surrogates), which
    the manifest load writes, YAML, cannot hold (a Python tester's find: an InputError
    named a line of that manifest, and an invalid escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise errors.InputError(
            "custom_op.load's %s: '%s' is not UTF-8 text, which the manifest custom_op.load "
            "writes (YAML) cannot hold" % (what, shown),
            detail="rename it, or build the library with 'neuronop build' in its folder and "
                   "load it with custom_op.load_library") from None
    return text


def _manifest(name, compute, shape, build_dir, multicore, cflags, includes):
    q = json.dumps   # a JSON string is a YAML flow scalar: any path or flag, quoted safely
    lines = [
        "# written by neuronop's custom_op.load; rewritten by every call",
        "name: %s" % q(name),
        "compute_srcs: [%s]" % ", ".join(q(p) for p in compute),
        "shape_srcs: [%s]" % ", ".join(q(p) for p in shape),
        "build_directory: %s" % q(build_dir),
        "multicore: %s" % ("true" if multicore else "false"),
        "extra_cflags: [%s]" % ", ".join(q(f) for f in cflags),
        "extra_include_paths: [%s]" % ", ".join(q(p) for p in includes),
    ]
    return "\n".join(lines) + "\n"


def _write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    # the thread's own name too: threads of one process that load one library at once
    # would write one file, and all but the first replace would fail
    tmp = "%s.%d.%d.tmp" % (path, os.getpid(), threading.get_ident())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load(name, compute_srcs, shape_srcs, build_directory=None, multicore=False,
         extra_cflags=None, extra_include_paths=None, verbose=False):
    """Builds lib<name>.so in build_directory (default: ~/.cache/neuronop/<name>) from the
    kernels in compute_srcs and the shape functions and NEURON_LIBRARY registration in
    shape_srcs, then registers its ops.  Returns the library's path.  Under `neuronop
    python --memcheck` it builds and registers lib<name>.memcheck.so instead.  A compile
    error raises neuronop.BuildError with the compiler's messages; a bad argument,
    InputError."""
    if not isinstance(name, str) or not name:
        raise TypeError("custom_op.load: name must be a non-empty str")
    # the build says so too, but only after the manifest, named by name, is written: a name
    # such as '../x' would have put it outside the build folder
    if not _C_IDENTIFIER.fullmatch(name):
        raise errors.InputError("library name '%s' is not a C identifier (letters, digits "
                                "and '_', not starting with a digit)" % name)
    compute = _paths("compute_srcs", compute_srcs)
    shape = _paths("shape_srcs", shape_srcs)
    if not any(p.endswith(_CXX) for p in shape):   # else the build's "missing key 'ops'"
        raise errors.InputError(
            "custom_op.load takes the ops from the NEURON_LIBRARY registration in a C++ shape "
            "source, and shape_srcs has none (%s)" % ", ".join(map(os.path.basename, shape)),
            detail="a C library's ops are in its neuronop.yaml: build it with 'neuronop build' "
                   "and load it with custom_op.load_library")
    if extra_cflags is not None and (isinstance(extra_cflags, str) or
                                     not all(isinstance(f, str) for f in extra_cflags)):
        raise TypeError("custom_op.load: extra_cflags must be a list of str")
    includes = _paths("extra_include_paths", extra_include_paths)
    # the build finds a missing source too, but when no source's folder exists it refuses
    # first the folder it is told to read them from, an option the caller never gave (a
    # Python tester's find)
    for key, paths in (("compute_srcs", compute), ("shape_srcs", shape)):
        missing = [p for p in paths if not os.path.lexists(p)]
        if missing:
            raise errors.InputError("custom_op.load's %s: source file '%s' not found"
                                    % (key, missing[0]))
    if build_directory is None:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        build_directory = os.path.join(cache, "neuronop", name)
    build_dir = _utf8("build_directory", os.path.abspath(os.fspath(build_directory)))
    for flag in extra_cflags or []:
        _utf8("extra_cflags", flag)
    meta = os.path.join(build_dir, ".neuronop")
    try:
        os.makedirs(meta, exist_ok=True)
    except OSError as e:   # (a Python user's find: a bare OSError named no argument)
        raise errors.InputError("custom_op.load's build_directory: cannot make '%s': %s"
                                % (build_dir, e.strerror or e)) from None
    manifest = os.path.join(meta, name + ".yaml")
    _write_if_changed(manifest, _manifest(name, compute, shape, build_dir, bool(multicore),
                                          list(extra_cflags or []), includes))
    dirs = [os.path.dirname(p) for p in compute + shape] + includes
    try:
        path = _build(manifest, build_dir, dirs, verbose, _client.memcheck())
    except errors.Error as e:
        if "changed while it was being built" in str(e):   # (a reviewer's: a race's words)
            raise errors.BuildError(
                "'%s' was not built: its manifest or sources changed during the build (another "
                "custom_op.load of '%s' into the same build_directory at the same time, or a "
                "file saved meanwhile); give each its own build_directory, or load it again"
                % (build_dir, name)) from None
        raise _as_argument_error(e, manifest) from None
    _check_built_as_asked(path, compute, shape, bool(multicore), list(extra_cflags or []))
    _ops.register(path)
    return path


def _check_built_as_asked(path, compute, shape, multicore, cflags):
    """Raises BuildError unless the library at path says it was built from these sources
    with these options.  Another process's load into the same build_directory with other
    arguments rewrites the manifest there, and the build that follows builds whichever came
    last (a red team's find: one process then ran the other's code without a word)."""
    desc = _client.supervisor().load(os.path.realpath(path))
    sources = sorted((s["path"], s["role"]) for s in desc.get("sources", []))
    asked = sorted([(p, "compute") for p in compute] + [(p, "shape") for p in shape])
    built = (sources, bool(desc.get("multicore")), list(desc.get("extra_cflags", [])))
    if built != (asked, multicore, cflags):
        raise errors.BuildError(
            "'%s' was built with other sources or options than this load asked for (%s): "
            "another custom_op.load of '%s' into the same build_directory ran at the same "
            "time; give each its own build_directory"
            % (path, "extra_cflags %s" % built[2] if built[2] != cflags else
               "multicore=%s" % built[1] if built[1] != multicore else "sources",
               os.path.basename(path)))


def _run_build(argv):
    """subprocess.run of a build, whose exit status is its verdict.  A process that ignores
    SIGCHLD never gets one: the kernel reaps the child, and subprocess reports 0 (a Python
    user's find: a failed build's old library was loaded as if the new one had been built).
    So SIGCHLD is given its default action for the build, which only the main thread may do."""
    ignored = signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN
    if ignored and threading.current_thread() is not threading.main_thread():
        raise errors.BuildError(
            "this process ignores SIGCHLD, so the build's exit status cannot be known from "
            "another thread than the main one: call custom_op.load from the main thread, or "
            "stop ignoring SIGCHLD")
    if ignored:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    finally:
        if ignored:
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)


def _build(manifest, build_dir, dirs, verbose, memcheck):
    """Builds the manifest custom_op.load wrote, whose sources are in dirs (its memcheck
    library with memcheck); the library's path."""
    # the manifest sits in the build folder, apart from the sources: say on the command line
    # (this program's, not a manifest's) where the build writes and what it may read
    readable = os.path.commonpath(dirs)
    argv = [_client.neuronop_binary(), "build", "--build-dir", build_dir,
            "--library-dir", readable] + (["-v"] if verbose else []) + (
                ["--memcheck"] if memcheck else []) + [manifest]
    proc = _run_build(argv)
    if verbose and proc.stdout:
        _ops.show(sys.stdout, proc.stdout)
    if proc.returncode != 0:
        text = proc.stderr.rstrip("\n")
        if verbose:   # the steps shown, as on success; the exception says what failed (a
            # Python tester's find: it began with a g++ command line)
            lines = text.splitlines()
            steps = [line for line in lines if line.startswith("neuronop: note: ")]
            if steps:
                _ops.show(sys.stderr, "\n".join(steps) + "\n")
            text = "\n".join(line for line in lines if not line.startswith("neuronop: note: "))
        text = text or "neuronop build failed with exit status %d" % proc.returncode
        cls = {2: errors.InputError, 3: errors.BuildError}.get(proc.returncode, errors.Error)
        raise cls(text=text, **_diagnostic(text))
    if proc.stderr:
        _ops.show(sys.stderr, proc.stderr)   # the compilers' warnings
    name = os.path.splitext(os.path.basename(manifest))[0]
    return os.path.join(build_dir, "lib%s%s.so" % (name, ".memcheck" if memcheck else ""))


# A diagnostic of neuronop build's standard error, as report.c writes it: FILE:LINE:COL (or
# FILE:LINE, or neuronop) ": " SEVERITY ": " MESSAGE, then its detail lines.
_DIAG = re.compile(r"(?:(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?|neuronop): "
                   r"(?P<sev>error|warning|note): (?P<msg>.*)")


def _diagnostic(text):
    """The parts of neuronop build's first error in text (warnings may come before it), as
    an Error's attributes."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines)
                  if (m := _DIAG.fullmatch(line)) and m.group("sev") == "error"), None)
    if first is None:
        return {"message": lines[0] if lines else text}
    m = _DIAG.fullmatch(lines[first])
    detail = []   # the lines up to the next diagnostic
    for line in lines[first + 1:]:
        if _DIAG.fullmatch(line):
            break
        detail.append(line)
    return {"message": m.group("msg"), "detail": "\n".join(detail),
            "file": m.group("file") or "", "line": int(m.group("line") or 0),
            "col": int(m.group("col") or 0)}


def _as_argument_error(e, manifest):
    """e, said of load's argument instead when it points into the manifest load wrote, a file
    the caller never saw: the key on that line is the argument's name."""
    if not e.file or os.path.abspath(e.file) != manifest:
        return e
    try:
        with open(manifest) as f:
            key = f.read().splitlines()[e.line - 1].split(":")[0]
    except (OSError, IndexError):
        return e
    detail = "\n".join(line for line in e.detail.splitlines() if "manifest" not in line)
    return type(e)("custom_op.load's %s: %s" % (key, e.message), detail=detail)


def _memcheck_library(path):
    """Under --memcheck, the memcheck library to load in place of the one at path: built
    from the manifest custom_op.load left beside it (incrementally), else the one `neuronop
    build --memcheck` left beside it if it is not older; else path itself, which the
    supervisor refuses unless it is a memcheck library."""
    folder, base = os.path.split(os.path.abspath(path))
    if not (base.startswith("lib") and base.endswith(".so")) or base.endswith(".memcheck.so"):
        return path
    name = base[3:-3]
    variant = os.path.join(folder, "lib%s.memcheck.so" % name)
    manifest = os.path.join(folder, ".neuronop", name + ".yaml")
    if os.path.isfile(manifest):
        # each line custom_op.load writes is `key: VALUE`, VALUE a JSON scalar or list
        fields = {}
        with open(manifest) as f:
            for line in f:
                key, sep, value = line.partition(": ")
                if sep and not key.startswith("#"):
                    fields[key] = json.loads(value)
        dirs = [os.path.dirname(p) for p in
                fields.get("compute_srcs", []) + fields.get("shape_srcs", [])]
        if fields.get("build_directory") == folder and dirs:
            return _build(manifest, folder, dirs + fields.get("extra_include_paths", []),
                          False, True)
    try:
        if os.path.getmtime(variant) >= os.path.getmtime(path):
            return variant
    except OSError:
        pass
    return path


def load_library(path):
    """Registers the ops of a library built by custom_op.load or `neuronop build`.  Loading
    the same library again is harmless.  Under `neuronop python --memcheck` the library's
    memcheck build is loaded instead (see _memcheck_library).  Returns a description of the
    library."""
    # a path as bytes is the same file as its str (a Python tester's find: loading both
    # named one library twice, the second a clash)
    path = os.fsdecode(os.fspath(path))
    if _client.memcheck():
        path = _memcheck_library(path)
    return _ops.register(path)
