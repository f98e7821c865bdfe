"""The client side of neuronop's supervisor, ``neuronop __serve`` (cmd/neuronop/cmd-serve.c
describes the protocol; the structs below mirror its own).

The Python process never forks per call: forking a process that has torch loaded costs
about 17 ms.  Instead it starts the supervisor once, with exec, and sends it requests over a
SOCK_SEQPACKET socket.  The supervisor owns the virtual device and runs every kernel in the
device's confined worker; this process keeps tensors in an arena, a memfd both map, so an
input is copied once (into the arena, which also makes it contiguous) and an output once
(out of it, into a tensor the caller owns).  A supervisor that dies is replaced by the next
call, which loads its libraries again.

A call's own cost is kept to two system calls here (a send and a receive): replies land in
a buffer allocated once (allocating a megabyte per reply cost an mmap and a munmap, and the
munmap of a process with torch's threads costs a TLB shootdown), and a dead supervisor is
noticed by the request it could not read (the send fails, or the receive says ECONNRESET)
rather than by polling it before every call; that request is then sent to a new one.
"""

import atexit
import errno
import json
import mmap
import os
import shutil
import socket
import struct
import subprocess
import threading

import torch

from . import errors

MAGIC = 0x42504F4E  # "NOPB"
REQ_ARENA, REQ_LOAD, REQ_CALL, REQ_FETCH = 1, 2, 3, 4
REP_OK, REP_ERROR, REP_ROOM = 0, 1, 2
ITEM_PRINTF, ITEM_DIAG, ITEM_ERROR, ITEM_JSON = 1, 2, 3, 4
CALL_PROFILE = 1

HDR = struct.Struct("<IIiI")
CALL_REQ = struct.Struct("<IIIIQ")
CALL_ARG = struct.Struct("<iiii8qQdq")
CALL_REP = struct.Struct("<ii8qQQdd")
ITEM = struct.Struct("<II")
DIAG = struct.Struct("<iiiii4I")
LIB_ID = struct.Struct("<II")

ARG_TENSOR, ARG_SCALAR, ARG_DOUBLE, ARG_INT64 = 0, 1, 2, 3
# the library's names of them (its self-description's "args")
KINDS = {"tensor": ARG_TENSOR, "scalar": ARG_SCALAR, "double": ARG_DOUBLE,
         "int64": ARG_INT64}
ALIGN = 64
MAX_REPLY = 1 << 20
MAX_PLANS = 256     # calls' plans kept (Supervisor._plan); all dropped when there are more
# Calls from signal handlers, each made while the one it interrupted waits, that may be
# under way at once (Supervisor._serving): each needs a supervisor of its own, and one that
# starts takes long enough for a fast timer to interrupt it again, which nested them by the
# dozen until Python ran out of stack.
MAX_NESTED = 4
# The arena grows for a large call and would stay that large for the session: one above
# SHRINK_ABOVE bytes is replaced, after SHRINK_CALLS calls in a row that each needed at most
# a quarter of it, by one twice the largest of those calls' needs (Supervisor._note_need).
# A loop whose every step makes one large call among fewer small ones keeps its arena.
SHRINK_ABOVE = 8 << 20
SHRINK_CALLS = 64

# The device's dtypes (enum nop_dtype), by torch dtype.
DTYPES = {
    torch.float32: 0, torch.bfloat16: 1, torch.float16: 2, torch.int32: 3,
    torch.int8: 4, torch.int64: 5, torch.int16: 6, torch.uint8: 7,
}
TORCH_DTYPES = {code: dt for dt, code in DTYPES.items()}

SEVERITIES = {0: "error", 1: "warning", 2: "note"}


def neuronop_binary():
    """The neuronop program: the one that launched us, else $NEURONOP, else on PATH."""
    for var in ("NEURONOP_BIN", "NEURONOP"):
        path = os.environ.get(var)
        if path and os.access(path, os.X_OK):
            return path
    path = shutil.which("neuronop")
    if path:
        return path
    raise errors.SupervisorError(
        "cannot find the neuronop program: put it on PATH, set NEURONOP to its path, or run "
        "the script with 'neuronop python'")


def env_flag(name):
    """Whether the environment flag name is on: set, and neither empty nor "0"."""
    return os.environ.get(name, "") not in ("", "0")


def memcheck():
    """Whether ops run their libraries' memcheck builds (`neuronop python --memcheck`, or
    NEURONOP_MEMCHECK=1)."""
    return env_flag("NEURONOP_MEMCHECK")


# what a send to a supervisor that has ended fails with
_GONE_ERRNOS = (errno.EPIPE, errno.ECONNRESET, errno.ECONNREFUSED, errno.ENOTCONN)


class _Gone(Exception):
    """The supervisor ended before this request reached it (so nothing of it ran): the
    caller starts another and asks again."""


class Diag:
    """One diagnostic from the supervisor."""

    __slots__ = ("severity", "line", "col", "errkind", "fault", "file", "where",
                 "message", "detail")

    def text(self):
        return errors.format_diag(SEVERITIES.get(self.severity, "error"), self.message,
                                  self.where, self.detail, self.file, self.line, self.col)

    def exception(self):
        cls = errors.for_kind(self.errkind, self.fault)
        return cls(self.message, self.where, self.detail, self.file, self.line, self.col,
                   text=self.text())


def _parse_diag(data, pos):
    d = Diag()
    (d.severity, d.line, d.col, d.errkind, d.fault, *lens) = DIAG.unpack_from(data, pos)
    pos += DIAG.size
    parts = []
    for n in lens:
        parts.append(bytes(data[pos:pos + n]).decode("utf-8", "replace"))
        pos += n
    d.file, d.where, d.message, d.detail = parts
    return d


class Reply:
    """A reply: its status, fixed part and items."""

    def __init__(self, data, fixed):
        # data is a view of the receive buffer, which the next request overwrites: every
        # field is read out of it here (bytes(), unpack), nothing keeps a view of it
        magic, self.type, self.status, _ = HDR.unpack_from(data, 0)
        if magic != MAGIC:
            raise errors.SupervisorError("the supervisor sent a reply without the protocol's "
                                         "magic number")
        pos = HDR.size
        self.fixed = None
        if fixed is not None and len(data) >= pos + fixed.size:
            self.fixed = fixed.unpack_from(data, pos)
            pos += fixed.size
        self.printf = ""
        self.diags = []
        self.error = None
        self.json = None
        while pos + ITEM.size <= len(data):
            kind, n = ITEM.unpack_from(data, pos)
            pos += ITEM.size
            body = data[pos:pos + n]
            if kind == ITEM_PRINTF:
                self.printf += bytes(body).decode("utf-8", "replace")
            elif kind == ITEM_DIAG:
                self.diags.append(_parse_diag(data, pos))
            elif kind == ITEM_ERROR:
                self.error = _parse_diag(data, pos)
            elif kind == ITEM_JSON:
                # paths in it are the file system's bytes, as os.fsdecode takes them (a
                # Python tester's find: a folder named in Latin-1 raised UnicodeDecodeError)
                self.json = json.loads(bytes(body).decode("utf-8", "surrogateescape"))
            pos += n

    def raise_error(self):
        if self.error is not None:
            raise self.error.exception()
        raise errors.SupervisorError("the supervisor failed the request without saying why")


class Arena:
    """A memfd mapped here and in the supervisor; tensors are laid out in it per call."""

    MAX_VIEWS = 256   # views kept; a loop calls its ops with a handful of layouts

    def __init__(self, size):
        self.size = size
        self.fd = os.memfd_create("neuronop-arena", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, size)
        self.map = mmap.mmap(self.fd, size)
        # never an inference tensor, nor its views, though the first call that makes them
        # may come under torch.inference_mode(): a later call outside it copies into them,
        # which torch refuses of an inference tensor
        with torch.inference_mode(False):
            self.bytes = torch.frombuffer(self.map, dtype=torch.uint8)
        self._views = {}   # (offset, dtype, shape) -> the view: making one costs 3 torch ops

    def view(self, offset, dtype, shape):
        """A tensor over the arena's bytes at offset.  It is the arena's: copy into it or
        clone it, never hand it out or keep it past the arena (close unmaps the bytes under
        any view still alive: the plans that hold views are dropped first)."""
        key = (offset, dtype, shape)
        v = self._views.get(key)
        if v is None:
            n = _numel(shape) * _itemsize(dtype)
            with torch.inference_mode(False):   # as the bytes (__init__)
                v = self.bytes[offset:offset + n].view(dtype).view(shape)
            if len(self._views) >= self.MAX_VIEWS:
                self._views.clear()
            self._views[key] = v
        return v

    def close(self):
        """Unmaps the bytes and closes the memfd; BufferError, and the arena as it was, when
        a view of it is still alive somewhere."""
        self._views = {}
        self.bytes = None
        try:
            self.map.close()
        except BufferError:
            with torch.inference_mode(False):   # (as __init__)
                self.bytes = torch.frombuffer(self.map, dtype=torch.uint8)
            raise
        os.close(self.fd)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


_ITEMSIZES = {}


def _itemsize(dtype):
    size = _ITEMSIZES.get(dtype)
    if size is None:
        size = _ITEMSIZES[dtype] = torch.empty((), dtype=dtype).element_size()
    return size


def _align(n):
    return (n + ALIGN - 1) & ~(ALIGN - 1)


class Result:
    __slots__ = ("output", "printf", "diags", "error", "host_seconds", "device_seconds")


class Supervisor:
    """One supervisor process and its arena; every request holds the lock."""

    def __init__(self, depth=0):
        # reentrant for the thread that holds it: a signal handler that calls an op runs in
        # a thread that may be in a request (_serving)
        self._lock = threading.RLock()
        self._depth = depth     # how many calls this one's requests interrupt (_serving)
        self._busy = False      # a request of the thread that holds the lock is under way
        self._inner = None      # the supervisor of the calls made while it is (_serving)
        self._proc = None
        self._sock = None
        self._arena = None
        self._arena_sent = False   # the current supervisor has mapped self._arena
        self._ids = {}          # library path -> its id in the current supervisor
        self._opidx = {}        # library path -> {op name: its index} as that one read it
        self._plans = {}        # a call's key -> its plan (_plan)
        self._rbuf = None       # the reply buffer (MAX_REPLY bytes) and a view of it
        self._rview = None
        self._small_calls = 0   # calls in a row that needed at most a quarter of the arena
        self._small_need = 0    # the most one of them needed (_note_need)
        self._unread = False    # a request was sent on this socket whose reply may not
                                # have been read (_request)

    # ---- the process ----------------------------------------------------------------------

    def _start(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = [neuronop_binary(), "__serve", str(theirs.fileno())]
        extra = os.environ.get("NEURONOP_SERVE_ARGS", "")
        argv += [a for a in extra.split("\n") if a]
        if env_flag("NEURONOP_STATS"):
            argv.append("--profile")
        if memcheck():
            argv.append("--memcheck")
        try:
            self._proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(),),
                                          stdin=subprocess.DEVNULL)
        except OSError as e:
            ours.close()
            raise errors.SupervisorError("cannot start neuronop's supervisor '%s': %s"
                                         % (argv[0], e.strerror)) from None
        finally:
            theirs.close()
        self._sock = ours
        self._unread = False
        self._ids = {}
        self._opidx = {}
        self._plans = {}
        self._arena_sent = False

    def _stop(self, grace=0.0):
        """Ends the supervisor: closing its socket ends it within a moment (it may be
        finishing a run, bounded by the device's timeout); after grace seconds it is killed."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def after_fork_in_child(self):
        """In a child forked from this process (a DataLoader worker, multiprocessing): the
        supervisor, its socket and the arena are the parent's, and sharing them would mix
        the two processes' requests and tensors, so the child lets go of its copies (closing
        only its own descriptors) and its first call starts its own supervisor."""
        self._lock = threading.RLock()  # another thread may have held it at the fork
        self._busy = False
        if self._inner is not None:
            self._inner.after_fork_in_child()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._proc = None               # the parent's child: not ours to wait for or kill
        self._plans = {}                # they hold views of the arena
        if self._arena is not None:
            try:
                self._arena.close()
            except BufferError:         # a view of it is alive in this copy: let it go
                pass
            self._arena = None
        self._arena_sent = False
        self._ids = {}
        self._opidx = {}

    def pid(self):
        """The supervisor's process id (None before the first request)."""
        return self._proc.pid if self._proc is not None else None

    def close(self):
        """Ends the supervisor and frees the arena (the next call starts another)."""
        with self._lock:
            if self._busy:   # from a signal handler, in a request of this thread's
                if self._inner is not None:
                    self._inner.close()
                return
            # a signal handler's call while this waits for the supervisor to end goes to the
            # second one (_serving), as during a request: it used to start a new first one
            # here, which this close then dropped unwaited (a process left running)
            self._busy = True
            try:
                self._stop(grace=2.0)
                self._plans = {}   # they hold views of the arena
                # out of use before it is closed: an exception in between (a signal
                # handler's) must not leave a closed arena in use
                arena, self._arena = self._arena, None
                if arena is not None:
                    arena.close()
            finally:
                self._busy = False
            if self._inner is not None:   # last: such a call may have started it just now
                self._inner.close()

    def at_exit(self):
        """Ends the supervisor as the interpreter exits.  A call still under way then is a
        daemon thread's (python has joined every other thread by now), and python does not
        wait for daemon threads: nor does this (a new user's find: the exit waited out the
        call, its device time limit long).  The supervisor, which dies with python
        (cmd-serve.c), and its workers end as python does; the thread stays where it is,
        as python leaves it (waking it would make it run on in a finalizing interpreter)."""
        if self._lock.acquire(timeout=0.2):
            try:
                self.close()
            finally:
                self._lock.release()

    def _ensure_running(self):
        """Starts the supervisor when there is none (the first request, or after one ended).
        One that died since its last reply is not polled for here: the next request's send
        fails, and _retrying starts another."""
        if self._sock is None or self._proc is None:
            self._stop()
            self._start()
        if self._rbuf is None:
            self._rbuf = bytearray(MAX_REPLY)
            self._rview = memoryview(self._rbuf)

    def _retrying(self, fn, *args):
        """fn(*args) with a running supervisor; when the supervisor turns out to have ended
        before a request of fn reached it (killed, or it died between calls), fn runs once
        more with a new one, which gets the arena and the libraries again as fn needs them."""
        self._ensure_running()
        try:
            return fn(*args)
        except _Gone:
            self._stop()
            self._start()
        try:
            return fn(*args)
        except _Gone as gone:   # a new supervisor that ends at once: say so
            self._stop()
            raise errors.SupervisorError(
                "neuronop's supervisor process stopped answering (%s); the next call starts "
                "a new one" % gone) from None

    def _request(self, rtype, body, fixed=None, fds=()):
        if self._sock is None:
            raise errors.SupervisorError("neuronop's supervisor process is not running; the "
                                         "next call starts a new one")
        if self._unread:
            # a request whose reply was never read: one interrupted, whose clean-up (closing
            # this socket) was itself interrupted by a second Ctrl-C or a handler's
            # exception.  Its reply would answer this request (a Python user's find: every
            # call after gave the previous one's output), so this supervisor is done, and
            # _retrying sends this request to a new one
            raise _Gone("a request before this one was interrupted")
        msg = HDR.pack(MAGIC, rtype, 0, 0) + body
        sent = False
        self._unread = True   # until the reply is read; nothing in between may clear it
        try:
            # MSG_NOSIGNAL: a script that restored SIGPIPE's default must not die of a
            # supervisor that ended
            if fds:
                socket.send_fds(self._sock, [msg], list(fds), socket.MSG_NOSIGNAL)
            else:
                self._sock.send(msg, socket.MSG_NOSIGNAL)
            sent = True
            n = self._sock.recv_into(self._rbuf)
        except OSError as e:
            # a send that fails, or a receive that finds the supervisor ended with the request
            # still unread in its queue (the kernel then says ECONNRESET, not end-of-file):
            # nothing of the request ran (a supervisor takes a request off the socket only
            # alive: cmd-serve.c's receive)
            if e.errno in _GONE_ERRNOS and (not sent or e.errno == errno.ECONNRESET):
                raise _Gone(e.strerror) from None
            n = 0
            why = e.strerror
        except BaseException:
            # interrupted (KeyboardInterrupt) between request and reply: the reply would
            # answer the next request, so this supervisor is done; the next call starts one
            self._stop()
            raise
        else:
            why = "it ended"
        if n:
            self._unread = False
        else:
            status = self._proc.poll()
            self._stop()
            raise errors.SupervisorError(
                "neuronop's supervisor process stopped answering (%s%s); the next call "
                "starts a new one" % (why, ", exit status %s" % status if status is not None
                                      else ""))
        return Reply(self._rview[:n], fixed)

    # ---- requests -------------------------------------------------------------------------

    def _ensure_arena(self, size):
        """An arena of at least size bytes that the supervisor has mapped."""
        if self._arena is None or self._arena.size < size:
            new = max(size, 2 * self._arena.size if self._arena else 0, 1 << 20)
            new = (new + (1 << 20) - 1) & ~((1 << 20) - 1)
            arena = Arena(new)
            self._plans = {}   # they lay calls out in the old arena, and hold views of it
            self._small_calls = self._small_need = 0
            # the new one in place before the old is closed: an exception a signal handler
            # raises in between must not leave a closed arena in use
            old, self._arena, self._arena_sent = self._arena, arena, False
            if old is not None:
                old.close()
        if not self._arena_sent:
            reply = self._request(REQ_ARENA, struct.pack("<Q", self._arena.size),
                                  fds=(self._arena.fd,))
            if reply.status != REP_OK:
                reply.raise_error()
            self._arena_sent = True
        return self._arena

    def _lib_id(self, path):
        lib = self._ids.get(path)
        if lib is None:
            lib = self._load(path)[0]
        return lib

    def _load(self, path):
        reply = self._request(REQ_LOAD, os.fsencode(path), fixed=LIB_ID)
        if reply.status != REP_OK:
            reply.raise_error()
        self._ids[path] = reply.fixed[0]
        # a call names its op: this supervisor's index of it is in what it read just now,
        # which a rebuild since Python registered the op may have reordered (a supervisor
        # started again, or the second one, reads the file anew)
        self._opidx[path] = {op["name"]: (i, [KINDS.get(t) for t in op["args"]])
                             for i, op in enumerate(reply.json.get("ops", []))}
        self._plans = {}   # they name libraries by their ids
        if self._inner is not None:   # its description may be older: it reads the file again
            self._inner._ids.pop(path, None)
        return reply.fixed[0], reply.json

    def _plan(self, path, op, args, profile):
        """A call's plan: its request, the arena's views its tensor arguments are copied
        into (argument index, view), and the output's offset.  It holds for the current
        supervisor (the library's id), arena and library load: a new one of any of them
        drops every plan."""
        # lay the inputs out, then room for the output (as large as the largest input, a
        # guess that fits elementwise ops; a larger output costs one more round trip)
        layout = []
        end = 0
        largest = ALIGN
        for kind, value in args:
            if kind == ARG_TENSOR:
                n = value.numel() * value.element_size()
                layout.append(end)
                end = _align(end + n)
                largest = max(largest, n)
            else:
                layout.append(0)
        out_offset = end
        arena = self._ensure_arena(out_offset + largest)
        lib = self._lib_id(path)
        found = self._opidx[path].get(op)
        if found is None:
            raise errors.InputError(
                "'%s' no longer has op '%s': it was rebuilt without it since it was loaded"
                % (path, op))
        index, kinds = found
        if kinds != [kind for kind, _ in args]:
            # (a new Python user's find: the error named an argument's type, not the rebuild)
            # (the supervisor's words, when it is the one to find it: cmd-serve.c)
            names = {k: name for name, k in KINDS.items()}
            raise errors.InputError(
                "'%s' was rebuilt since the op was loaded, as %s(%s): torch cannot change a "
                "defined op's schema; restart Python to call the new one, or rebuild the "
                "library as it was" % (path, op, ", ".join(names.get(k, "?") for k in kinds)))
        parts = [CALL_REQ.pack(lib, index, len(args), CALL_PROFILE if profile else 0,
                               out_offset)]
        inputs = []
        for i, ((kind, value), offset) in enumerate(zip(args, layout)):
            if kind == ARG_TENSOR:
                shape = tuple(value.shape)
                # a 0-d tensor is copied into a 1-element view (copy_ broadcasts it)
                inputs.append((i, arena.view(offset, value.dtype, shape or (1,))))
                sizes = list(shape) + [0] * (8 - len(shape))
                parts.append(CALL_ARG.pack(ARG_TENSOR, DTYPES[value.dtype], len(shape), 0,
                                           *sizes, offset, 0.0, 0))
            elif kind == ARG_INT64:
                parts.append(CALL_ARG.pack(kind, 0, 0, 1, *([0] * 8), 0, 0.0, value))
            elif kind == ARG_DOUBLE:
                parts.append(CALL_ARG.pack(kind, 0, 0, 0, *([0] * 8), 0, float(value), 0))
            else:   # a Scalar: an int stays an int
                is_int = isinstance(value, int)
                parts.append(CALL_ARG.pack(kind, 0, 0, 1 if is_int else 0, *([0] * 8), 0,
                                           0.0 if is_int else float(value),
                                           value if is_int else 0))
        return b"".join(parts), inputs, out_offset, out_offset + largest

    def _serving(self, fn, *args):
        """fn(*args) with a running supervisor, holding the lock.  A signal handler runs in
        the main thread between two bytecodes, also while that thread waits for a reply: one
        that calls an op then (a SIGINT or SIGALRM handler that evaluates the model) would
        deadlock on the lock, or, past it, read the pending request's reply as its own.  Its
        requests go to a second supervisor, started for them and kept."""
        with self._lock:
            if self._busy:
                if self._depth + 1 >= MAX_NESTED:
                    raise errors.SupervisorError(
                        "an op was called from a signal handler while %d calls it interrupted "
                        "were under way: a handler that calls ops must not come again before "
                        "they return (a timer slower than the op)" % MAX_NESTED)
                if self._inner is None:
                    self._inner = Supervisor(self._depth + 1)
                return self._inner._serving(fn.__func__.__get__(self._inner), *args)
            self._busy = True
            try:
                return self._retrying(fn, *args)
            finally:
                self._busy = False

    def load(self, path):
        """Describes the library at path (never loading its code here); its JSON."""
        return self._serving(self._load, path)[1]

    def call(self, path, op, args, profile=False):
        """Runs op (its name) of the library at path with args, a list of (ARG_*, value):
        tensors must be CPU tensors of a device dtype.  Returns (Result, Reply): the
        Result's output is None when the op failed, and Reply.raise_error() raises why
        (after the caller has shown the run's warnings and printf text)."""
        return self._serving(self._call, path, op, args, profile)

    def _call(self, path, op, args, profile):
        # a loop calls an op with the same shapes again and again: its request and the
        # arena's views for its inputs are made once per (op, dtypes and shapes, scalars)
        key = [path, op, profile]
        for kind, value in args:
            if kind == ARG_TENSOR:
                key += (value.dtype, value.shape)
            else:
                key += _scalar_key(value)
        key = tuple(key)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(path, op, args, profile)
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            self._plans[key] = plan
        request, inputs, out_offset, need = plan
        for i, view in inputs:   # the one copy in, which also makes the input contiguous
            view.copy_(args[i][1])
        reply = self._request(REQ_CALL, request, fixed=CALL_REP)
        res = Result()
        res.printf = reply.printf
        res.diags = reply.diags
        res.output = None
        if reply.fixed is not None:
            res.host_seconds, res.device_seconds = reply.fixed[12], reply.fixed[13]
        else:
            res.host_seconds, res.device_seconds = 0.0, -1.0
        if reply.status == REP_ROOM:   # the output did not fit: it waits for a larger arena
            nbytes = reply.fixed[11]
            need = out_offset + nbytes
            plan = inputs = None   # views of the arena, which this replaces
            self._ensure_arena(need)   # the inputs are no longer needed
            reply = self._request(REQ_FETCH, struct.pack("<Q", out_offset), fixed=CALL_REP)
        plan = inputs = None   # views of the arena, which _note_need may replace
        if reply.status != REP_OK:
            res.error = reply.error
            self._note_need(need)
            return res, reply
        dtype_code, ndim = reply.fixed[0], reply.fixed[1]
        shape = tuple(reply.fixed[2:2 + ndim])
        offset = reply.fixed[10]
        dtype = TORCH_DTYPES[dtype_code]
        if shape:
            res.output = self._arena.view(offset, dtype, shape).clone()
        else:
            res.output = self._arena.view(offset, dtype, (1,)).clone().reshape(())
        self._note_need(need)
        return res, reply

    def _note_need(self, need):
        """Counts a call that needed need bytes of the arena, and replaces an arena larger
        than SHRINK_ABOVE by a smaller one after SHRINK_CALLS calls in a row that each needed
        at most a quarter of it: the large call that grew it is over, and its memory (mapped
        here and in the supervisor) goes back to the host.  The new arena is sent at once, so
        the supervisor lets go of the old one now, not at the next call."""
        arena = self._arena
        if arena is None or arena.size <= SHRINK_ABOVE or 4 * need > arena.size:
            self._small_calls = self._small_need = 0
            return
        self._small_calls += 1
        self._small_need = max(self._small_need, need)
        if self._small_calls < SHRINK_CALLS:
            return
        size = 2 * self._small_need
        self._plans = {}   # they hold views of the arena
        self._arena = None   # out of use before it is closed, as in close()
        try:
            arena.close()
        except BufferError:   # a view of it is still alive somewhere: keep it for now
            self._arena = arena
            self._small_calls = self._small_need = 0
            return
        try:
            self._ensure_arena(size)
        except (_Gone, errors.Error, OSError):   # the call is answered: the next one makes
            pass                                  # and sends an arena (or says why it cannot)


_DOUBLE = struct.Struct("<d")


def _scalar_key(value):
    """A scalar argument's part of a plan's key.  The type too: 1, 1.0 and True are equal,
    but not one request.  A float by its bits: 0.0 == -0.0 (x / 0.0 and x / -0.0 differ in
    sign), and NaN equals nothing, not even itself (its calls would never find their plan)."""
    if isinstance(value, float):
        return (float, _DOUBLE.pack(value))
    return (type(value), value)


_supervisor = None
_supervisor_lock = threading.Lock()
# (held across a fork, as _ops' lock is: a child must not start with it held by another thread)
os.register_at_fork(before=_supervisor_lock.acquire,
                    after_in_parent=_supervisor_lock.release,
                    after_in_child=_supervisor_lock.release)


def supervisor():
    """The process's supervisor client (the process starts when it is first asked)."""
    global _supervisor
    if _supervisor is None:
        with _supervisor_lock:
            if _supervisor is None:
                _supervisor = Supervisor()
                # at exit, wait for it to end, so nothing outlives the script
                atexit.register(_supervisor.at_exit)
                os.register_at_fork(after_in_child=_supervisor.after_fork_in_child)
    return _supervisor
