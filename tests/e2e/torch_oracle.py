"""torch_oracle.py - runs the end-to-end tests' torch_says snippets (lib.sh) with one import of
torch for a whole `make check`, not one per snippet (a second of CPU each, and a test run
computes a score of them when its cache is cold, as in CI).

    torch_oracle.py ask SOCKET     runs the Python code on standard input as
                                   `/usr/bin/python3 -c CODE` would: its standard output and
                                   error, and its exit status
    torch_oracle.py serve SOCKET   the server `ask` starts when none answers on SOCKET

The server imports torch once, then forks a child for each snippet, so every snippet starts
from the state a fresh interpreter has after `import torch`, as the asking script's
`__main__`, in its folder and with its environment variables: the server itself computes
nothing, and a child seeds its random generators anew, as a fresh interpreter does (torch's
from the system's entropy too).  What torch read of the environment as it was imported
(OMP_NUM_THREADS, say) is the first asker's, as are the limits and the locale: a snippet that
depends on them must set them itself.  It leaves on
its own after IDLE_SECONDS without a question.  `ask` falls back to running the snippet in a
fresh /usr/bin/python3 whenever the server cannot answer, so a snippet's output never depends
on the server: only the time it takes does.  Run `ask` with /usr/bin/python3 -S: it must not
import torch itself.
"""

import errno
import fcntl
import os
import socket
import subprocess
import sys
import time

PYTHON = "/usr/bin/python3"   # Debian's, with python3-torch (mk/deps.sh)
IDLE_SECONDS = 60             # a test run asks now and then over a minute or two
START_SECONDS = 60            # importing torch takes a second, longer on a loaded machine


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return s
    except OSError:
        s.close()
        return None


def _start(path):
    """A connection to a server on path, started here unless another asker started one
    meanwhile (the lock beside path makes one server of the askers that find none); None
    when it could not be started (the lock too: flock fails on some network file systems)."""
    try:
        return _start_locked(path)
    except OSError:
        return None


def _start_locked(path):
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        s = _connect(path)
        if s is not None:
            return s
        # its own session, and no descriptor of ours: prove waits for the end of a test's
        # output, which a server holding it would delay by a minute
        server = subprocess.Popen([PYTHON, os.path.abspath(__file__), "serve", path],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True,
                                  cwd="/")
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and server.poll() is None:
            s = _connect(path)
            if s is not None:
                return s
            time.sleep(0.02)
        return None


def _message(s):
    """What s sends until it shuts its side: (its first line, the rest), as bytes."""
    data = bytearray()
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    head, _, rest = bytes(data).partition(b"\n")
    return head, rest


def _exchange(s, code):
    """The server's answer to code: (status, out, err), or None when it gave none whole."""
    cwd = os.fsencode(os.getcwd())
    env = b"\0".join(k + b"=" + v for k, v in os.environb.items())
    with s:
        s.sendall(b"%d %d\n" % (len(cwd), len(env)) + cwd + env + code)
        s.shutdown(socket.SHUT_WR)
        head, rest = _message(s)
    try:
        status, nout, nerr = (int(f) for f in head.split())
    except ValueError:
        return None
    if len(rest) != nout + nerr:
        return None
    return status, rest[:nout], rest[nout:]


def ask(path, code):
    answer = None
    # a socket's name has room for 107 bytes: past that, no server; a server that was
    # leaving as we connected: start another, once
    for _ in range(2 if len(os.fsencode(path)) < 100 else 0):
        s = _connect(path) or _start(path)
        if s is None:
            break
        try:
            answer = _exchange(s, code)
        except OSError:
            answer = None
        if answer is not None:
            break
    if answer is None:   # the old way: a fresh interpreter of its own
        os.execv(PYTHON, [PYTHON, "-c", code.decode()])
    status, out, err = answer
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def reseed():
    """Seeds every generator a fresh interpreter seeds from the system's entropy, as its own:
    forked children would otherwise all draw the server's one sequence."""
    import random
    import torch
    random.seed()
    torch.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()


def _run_as_main(code):
    """Runs code as `python3 -c` runs it: in a new module __main__, to its end, where the
    interpreter then waits for threads and runs exit handlers (their output is the
    snippet's too)."""
    import atexit
    import threading
    import types
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    sys.argv = ["-c"]
    sys.path[0] = ""
    try:
        exec(compile(code, "<string>", "exec"), main.__dict__)
    finally:
        threading._shutdown()
        atexit._run_exitfuncs()


def _answer(conn):
    """In a child of the server: runs the snippet conn sends, in the asker's folder and
    environment, with its standard output and error in files, and sends back its status
    and both."""
    import tempfile
    import traceback
    head, rest = _message(conn)
    ncwd, nenv = (int(f) for f in head.split())
    cwd, env, code = rest[:ncwd], rest[ncwd:ncwd + nenv], rest[ncwd + nenv:]
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    status = 0
    try:
        os.chdir(cwd)
        os.environb.clear()
        for kv in env.split(b"\0") if env else ():
            k, _, v = kv.partition(b"=")
            os.environb[k] = v
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        reseed()
        _run_as_main(code)
    except KeyboardInterrupt:
        traceback.print_exc()
        status = 130   # as the shell sees an interpreter that ended by SIGINT
    except SystemExit as e:
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code & 0xff
        else:
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    blobs = []
    for f in (out, err):
        f.seek(0)
        blobs.append(f.read())
    conn.sendall(b"%d %d %d\n" % (status, len(blobs[0]), len(blobs[1])) + b"".join(blobs))


def serve(path):
    import signal
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = "%s.%d" % (path, os.getpid())
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    listener.bind(tmp)   # before the import: where it fails, it fails at once
    listener.listen(64)
    import torch  # noqa: F401  the point of the server: every snippet's child inherits it
    os.rename(tmp, path)   # askers find it only once it is ready
    mine = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # the kernel reaps the children
    listener.settimeout(IDLE_SECONDS)
    while True:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            break
        except OSError as e:
            if e.errno == errno.EINTR:
                continue
            break
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)   # a snippet may wait for its own
            conn.setblocking(True)
            try:
                _answer(conn)
            finally:
                os._exit(0)
        conn.close()
    try:   # unless another server has taken the name since
        if os.stat(path).st_ino == mine:
            os.unlink(path)
    except OSError:
        pass


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("ask", "serve"):
        sys.exit("usage: torch_oracle.py ask|serve SOCKET")
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
        return 0
    return ask(sys.argv[2], sys.stdin.buffer.read())


if __name__ == "__main__":
    sys.exit(main())
