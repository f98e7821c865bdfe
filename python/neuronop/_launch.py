"""What `neuronop python SCRIPT ARGS...` runs (cmd/neuronop/cmd-python.c): SCRIPT as
``python SCRIPT ARGS...`` would, with the compatibility package torch_neuronx appended to
sys.path (after everything else, so a real torch_neuronx, if installed, still wins) and,
with --stats, the op statistics printed to standard error at exit.
"""

import atexit
import os
import runpy
import sys


def main():
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    # run as a file, this module's folder is sys.path[0]: the script's must be instead, its
    # links resolved as python resolves them (a link to a script finds the modules beside
    # the script, not beside the link)
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    compat = os.environ.get("NEURONOP_COMPAT_DIR")
    if compat:
        sys.path.append(compat)
    # on unless empty or "0", as _client.env_flag reads it (not imported here: it imports
    # torch, which a script may never need)
    if os.environ.get("NEURONOP_STATS", "") not in ("", "0"):
        def report():
            from neuronop import format_stats
            sys.stderr.write(format_stats() + "\n")
        atexit.register(report)
    try:
        runpy.run_path(script, run_name="__main__")
    except Exception as e:   # (SystemExit and KeyboardInterrupt end the script as they do)
        # the traceback as python's own: from the script's frame, without this module's and
        # runpy's, which began every traceback of neuronop python
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        if tb is not None:   # (python prints the exception's own traceback, not the argument)
            e.__traceback__ = tb
        sys.excepthook(type(e), e, e.__traceback__)
        sys.exit(1)


if __name__ == "__main__":
    main()
