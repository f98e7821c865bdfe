"""What `neuronop python SCRIPT ARGS...` runs (cmd/neuronop/cmd-python.c): SCRIPT as
``python SCRIPT ARGS...`` would, with the compatibility package torch_neuronx appended to
sys.path (after everything else, so a real torch_neuronx, if installed, still wins) and,
with --stats, the op statistics printed to standard error at exit.
"""

import atexit
import builtins
import importlib.machinery
import importlib.util
import io
import marshal
import os
import pkgutil
import runpy
import signal
import sys
import types


def fresh_main(path, loader):
    """A new module __main__ in sys.modules, as python makes it for a script: the builtins
    module as __builtins__ (exec would put in its dict: a Python user's find, where
    __builtins__.open failed), an empty __annotations__ (a Python tester's find), and, given
    a file's path, its __file__ and loader."""
    module = types.ModuleType("__main__")
    module.__builtins__ = builtins
    module.__annotations__ = {}
    if path is not None:
        module.__file__ = path
        module.__cached__ = None
        module.__loader__ = loader
    sys.modules["__main__"] = module
    return module


def run_file(path):
    """Runs the Python file at path, source or compiled, as python runs a script: as a new
    module __main__ whose __file__ is path.  Compiled is what python takes for it: a .pyc
    name, or a file that starts as one (a reviewer's find: one named otherwise was compiled
    as source)."""
    machinery = importlib.machinery
    magic = importlib.util.MAGIC_NUMBER
    with io.open_code(path) as f:
        data = f.read()
    if path.endswith(".pyc") or data[:2] == magic[:2]:
        # as python's own run_pyc_file reads it, in its words: the magic number, three
        # words it skips (importlib's loader checked their flags, and refused valid files:
        # a reviewer's find), then the code
        if data[:4] != magic:
            raise RuntimeError("Bad magic number in .pyc file")
        if len(data) < 16:
            raise EOFError("EOF read where not expected")
        try:
            code = marshal.loads(data[16:])
        except (EOFError, ValueError, TypeError):
            code = None
        if not isinstance(code, types.CodeType):
            raise RuntimeError("Bad code object in .pyc file")
        loader = machinery.SourcelessFileLoader("__main__", path)
    else:
        loader = machinery.SourceFileLoader("__main__", path)
        with io.open_code(path) as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    exec(code, fresh_main(path, loader).__dict__)


def run_package(path):
    """Runs the folder or zip file at path by its __main__.py, as python does: path first on
    sys.path, and the module __main__ found there run as __main__ with sys.argv[0] left as
    given.  runpy.run_path would set sys.argv[0] to path; python's own start-up calls this
    function of runpy's for a folder or zip, as it is called here."""
    sys.path.insert(0, path)
    fresh_main(None, None)
    runpy._run_module_as_main("__main__", alter_argv=False)




def main():
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    # a file is named by its absolute path (the working folder joined on as it is, '..'
    # kept), as python names it, while sys.argv[0] stays as given (a Python tester's find:
    # a zip or compiled script was named relatively, and a zip's modules were not found
    # after a chdir)
    path = os.path.join(os.getcwd(), script)
    package = pkgutil.get_importer(script) is not None   # a folder or a zip file
    # run as a file, this module's folder is sys.path[0]: the script's must be instead, its
    # links resolved as python resolves them (a link to a script finds the modules beside
    # the script, not beside the link)
    del sys.path[0]
    if not package:
        sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    compat = os.environ.get("NEURONOP_COMPAT_DIR")
    if compat:
        sys.path.append(compat)
    # on unless empty or "0", as _client.env_flag reads it (not imported here: it imports
    # torch, which a script may never need)
    if os.environ.get("NEURONOP_STATS", "") not in ("", "0"):
        def report():
            from neuronop import format_stats
            if sys.stderr is not None:   # (None when its descriptor was closed)
                sys.stderr.write(format_stats() + "\n")
        atexit.register(report)
    try:
        if package:
            run_package(path)
        else:
            run_file(path)
    except SystemExit:   # ends the script as it does
        raise
    except BaseException as e:
        # the traceback as python's own: without this module's frames, which began every
        # traceback of neuronop python (a folder's or zip's begins with runpy's, as python's)
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        e.__traceback__ = tb   # (python prints the exception's own traceback)
        # as python leaves them for a post-mortem debugger (pdb.pm() at exit)
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        report_uncaught(type(e), e, tb)
        if isinstance(e, KeyboardInterrupt):
            interrupted()
        sys.exit(1)


def report_uncaught(kind, e, tb):
    """Shows an uncaught exception as python does: by sys.excepthook and, when that is
    missing or itself raises, by the default hook, saying so (a reviewer's find: the
    launcher's frames were shown instead)."""
    hook = getattr(sys, "excepthook", report_uncaught)   # (a function: never the hook)
    if hook is report_uncaught:
        sys.stderr.write("sys.excepthook is missing\n")
        sys.__excepthook__(kind, e, tb)
        return
    try:
        hook(kind, e, tb)   # (None is a hook that fails, as python calls it)
    except SystemExit:   # ends the process as it says, as under python
        raise
    except BaseException as failed:
        t = failed.__traceback__
        while t is not None and t.tb_frame.f_code.co_filename == __file__:
            t = t.tb_next
        failed.__traceback__ = t   # (what python prints: the exception's own)
        failed.__suppress_context__ = True   # (not "during handling of" e, as python)
        sys.stderr.write("Error in sys.excepthook:\n")
        sys.__excepthook__(type(failed), failed, t)
        sys.stderr.write("\nOriginal exception was:\n")
        sys.__excepthook__(kind, e, tb)


def interrupted():
    """Ends the process as python ends after an uncaught KeyboardInterrupt: its other
    threads joined (but daemon ones) and the exit handlers run, then SIGINT's default
    action, so that a shell sees the interrupt (and stops a loop that ran the script)."""
    import threading   # (here: a script that never makes a thread need not import it)
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):   # (AttributeError: None)
            pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    main()
