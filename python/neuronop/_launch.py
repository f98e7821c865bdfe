"""What `neuronop python SCRIPT ARGS...` runs (cmd/neuronop/cmd-python.c): SCRIPT as
``python SCRIPT ARGS...`` would, with the compatibility package torch_neuronx appended to
sys.path (after everything else, so a real torch_neuronx, if installed, still wins) and,
with --stats, the op statistics printed to standard error at exit.
"""

import atexit
import builtins
import importlib.machinery
import io
import os
import pkgutil
import runpy
import signal
import sys
import types


# What python's own __main__ has that runpy's does not give a script: the builtins module as
# __builtins__, not its dict (which exec puts in a module's globals that have none)
MAIN_GLOBALS = {"__builtins__": builtins}


def run_file(path):
    """Runs the Python file at PATH as python runs a script: as a new module __main__ whose
    __file__, and the code's file name in every traceback, is PATH."""
    with io.open_code(path) as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__cached__ = None
    module.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    # python's __main__ has the builtins module, where exec would put in its dict (a Python
    # user's find: __builtins__.open failed)
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


def main():
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    # a folder or zip file runs by its __main__.py, as runpy finds it, and runpy puts it
    # first on sys.path, as python does; a compiled .pyc runs through runpy too (a review's
    # find: run_file compiles source only); a source file runs here
    package = pkgutil.get_importer(script) is not None
    compiled = not package and script.endswith(".pyc")
    # run as a file, this module's folder is sys.path[0]: the script's must be instead, its
    # links resolved as python resolves them (a link to a script finds the modules beside
    # the script, not beside the link)
    if package:
        del sys.path[0]
    else:
        sys.path[0] = os.path.dirname(os.path.realpath(script))
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
    # a file is named by its absolute path (the working folder joined on as it is, '..'
    # kept), as python names it, while sys.argv[0] stays as given (runpy would name both by
    # the one path it is given)
    try:
        if package:
            main_file = os.path.join(os.path.abspath(script), "__main__.py")
            runpy.run_path(script, init_globals=MAIN_GLOBALS, run_name="__main__")
        elif compiled:
            main_file = script
            runpy.run_path(script, init_globals=MAIN_GLOBALS, run_name="__main__")
        else:
            main_file = os.path.join(os.getcwd(), script)
            run_file(main_file)
    except (Exception, KeyboardInterrupt) as e:   # (SystemExit ends the script as it does)
        # the traceback as python's own: from the script's frame, without this module's and
        # runpy's, which began every traceback of neuronop python
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != main_file:
            tb = tb.tb_next
        if tb is not None:   # (python prints the exception's own traceback, not the argument)
            e.__traceback__ = tb
        elif isinstance(e, SyntaxError):   # (a script that does not compile: no frame at all)
            e.__traceback__ = None
        sys.excepthook(type(e), e, e.__traceback__)
        if isinstance(e, KeyboardInterrupt):
            interrupted()
        sys.exit(1)


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
