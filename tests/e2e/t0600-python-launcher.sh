#!/bin/sh
# `neuronop python`: the launcher's contract - exit statuses, arguments, the script's folder
# on sys.path, the torch_neuronx compatibility package only under the launcher (and never in
# front of a real one), NEURONOP_PYTHON, and --stats.  Only the last test imports torch.
. ./lib.sh
py() { printf '%s\n' "$@" >"$WORK/s.py"; }

test_expect "--help describes the command and exits 0" '
    run python --help
    expect_status 0
    expect_out "usage: neuronop python [options] SCRIPT [ARG...]"
    expect_out "NEURONOP_PYTHON"'

test_expect "no script is a usage error" '
    run python
    expect_status 2'

test_expect "a script that cannot be read is a usage error naming it" '
    run python nothing-here.py
    expect_status 2
    expect_err "neuronop: error: cannot read script '\''nothing-here.py'\''"'

# neuronop __serve is the package's supervisor, started by it alone: anything else that starts
# it gets a usage error, never a supervisor serving a stranger's socket.
test_expect "__serve refuses a descriptor that is not a packet socket" '
    run __serve 0 </dev/null
    expect_status 2
    expect_err "neuronop __serve: error: FD must be a SOCK_SEQPACKET socket descriptor"'

test_expect "__serve refuses a socket its parent did not make" '
    py "import os, socket, subprocess, sys" \
       "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)" \
       "cmd = [\"sh\", \"-c\", \"\\\"\$0\\\" __serve %d; exit \$?\" % b.fileno(), os.environ[\"NEURONOP\"]]" \
       "sys.exit(subprocess.run(cmd, pass_fds=[b.fileno()]).returncode)"
    status=0
    /usr/bin/python3 s.py >out 2>err || status=$?
    expect_status 2
    expect_err "neuronop __serve: error: the process that made socket FD must be its parent, and alive"'

test_expect "the exit status is the script'\''s" '
    py "import sys" "sys.exit(7)"
    run python s.py
    expect_status 7
    py "print(\"fine\")"
    run python s.py
    expect_status 0
    expect_out fine'

# (a new user's find: the traceback began with the launcher's and runpy's frames)
test_expect "an uncaught exception exits 1 with its traceback, as python prints it" '
    py "def f():" "    raise ValueError(\"broken on purpose\")" "f()"
    run python s.py
    expect_status 1
    expect_err "ValueError: broken on purpose"
    /usr/bin/python3 s.py 2>want || true
    diff want err'

# (left alone in stop 40: __file__ was the path as given, where python makes it absolute, so
# a script that changed folder lost its own file; a script that did not compile, or a folder
# without __main__.py, printed the launcher's traceback)
test_expect "the script is named as python names it: __file__ absolute, argv[0] as given" '
    mkdir -p named
    py "import os, sys" "os.chdir(\"/\")" "print(__file__, sys.argv[0], __name__)" \
       "print(open(__file__).readline().strip())"
    mv s.py named/s.py
    run python ./named/../named/s.py
    expect_status 0
    printf "%s\n" "$WORK/./named/../named/s.py ./named/../named/s.py __main__" \
        "import os, sys" | diff - out'

# (a new user's find: an uncaught KeyboardInterrupt's traceback began with the launcher's
# frames)
test_expect "an uncaught KeyboardInterrupt ends it as it ends python: its traceback, SIGINT" '
    py "def f():" "    raise KeyboardInterrupt" "f()"
    run python s.py
    expect_status 130
    /usr/bin/python3 s.py 2>want || true
    diff want err'

test_expect "a script that does not compile exits 1 with python'\''s own message" '
    py "x = ("
    run python s.py
    expect_status 1
    /usr/bin/python3 s.py 2>want || true
    diff want err'

test_expect "a compiled script runs, as under python" '
    py "import sys" "print(\"compiled\", __name__, sys.argv[0])"
    /usr/bin/python3 -c "import py_compile; py_compile.compile(\"s.py\", cfile=\"c.pyc\")"
    run python c.pyc
    expect_status 0
    expect_out "compiled __main__ c.pyc"'

test_expect "a folder runs by its __main__.py, and without one is a usage error" '
    mkdir -p app empty
    printf "import sys\nprint(\"app\", sys.argv[0], __file__)\n" >app/__main__.py
    run python app
    expect_status 0
    echo "app app $WORK/app/__main__.py" | diff - out
    run python empty
    expect_status 2
    expect_err "neuronop: error: cannot run folder '\''empty'\'': it has no '\''__main__.py'\'' to run"'

# (a Python user's find: a script's __builtins__ was the builtins dict, where python gives
# its __main__ the module, so __builtins__.open failed)
test_expect "__builtins__ is the builtins module, as python gives it: for a file, a .pyc, a folder" '
    py "import builtins" "print(__builtins__ is builtins, __builtins__.open is open)"
    /usr/bin/python3 s.py >want
    grep -qx "True True" want
    /usr/bin/python3 -c "import py_compile; py_compile.compile(\"s.py\", cfile=\"b.pyc\")"
    mkdir -p bapp
    cp s.py bapp/__main__.py
    for script in s.py b.pyc bapp; do
        run python "$script"
        expect_status 0
        diff want out
    done'

# (a Python tester's finds: a zip or compiled script was named relatively, so a zip whose
# script changed folder could not import what the zip holds; no __annotations__; a
# BaseException printed the launcher's frames; no sys.last_value for pdb.pm() at exit)
test_expect "a zip, a .pyc and a folder are named, and fail, as python names them and fails" '
    mkdir -p zsrc zapp
    printf "%s\n" "import atexit, os, sys" "print(__file__, sys.path[0], sys.argv[0], __annotations__)" \
        "atexit.register(lambda: print(\"last\", type(sys.last_value).__name__))" \
        "os.chdir(\"/\")" "import helper" "class Stop(BaseException): pass" \
        "def f():" "    raise Stop(helper.WORD)" "f()" >zsrc/__main__.py
    echo "WORD = \"zipped\"" >zsrc/helper.py
    (cd zsrc && /usr/bin/python3 -m zipfile -c ../z.zip __main__.py helper.py)
    cp zsrc/__main__.py zsrc/helper.py zapp/
    cp zsrc/helper.py .
    /usr/bin/python3 -c "import py_compile; py_compile.compile(\"zsrc/__main__.py\", cfile=\"z.pyc\")"
    for script in z.zip zapp z.pyc; do
        /usr/bin/python3 $script >want 2>wanterr && exit 1
        run python $script
        expect_status 1
        diff want out
        diff wanterr err
        grep -q "^last Stop$" out
        grep -q "Stop: zipped" err
    done'

# (a reviewer's finds: a hook that raised, or none, showed the launcher's frames; a .pyc of
# another Python's magic number, or a compiled file not named .pyc, was not said as python)
test_expect "a broken or missing excepthook, a bad .pyc, a compiled file of another name: as python" '
    py "import sys" "def hook(*a):" "    raise ValueError(\"hook broke\")" \
       "sys.excepthook = hook" "raise KeyError(1)"
    cp s.py hook.py
    py "import sys" "del sys.excepthook" "raise KeyError(2)"
    cp s.py nohook.py
    py "import sys" "def hook(*a):" "    raise SystemExit(7)" "sys.excepthook = hook" \
       "raise KeyError(3)"
    cp s.py exits.py
    py "import sys" "sys.excepthook = None" "raise KeyError(4)"
    cp s.py nonehook.py
    printf "garbage, not compiled" >bad.pyc
    py "print(\"compiled\", __file__.endswith(\"/compiled\"))"
    /usr/bin/python3 -c "import py_compile; py_compile.compile(\"s.py\", cfile=\"compiled\")"
    # the magic number alone; a body that is no code; flags importlib refuses, python not
    /usr/bin/python3 -c "
import importlib.util
m = importlib.util.MAGIC_NUMBER
d = open(\"compiled\", \"rb\").read()
open(\"short.pyc\", \"wb\").write(m)
open(\"body.pyc\", \"wb\").write(m + bytes(12) + b\"garbage\")
open(\"flags.pyc\", \"wb\").write(d[:4] + bytes([7, 0, 0, 0]) + d[8:])
"
    for script in hook.py nohook.py exits.py nonehook.py bad.pyc compiled short.pyc body.pyc \
            flags.pyc; do
        status=0
        /usr/bin/python3 $script >want 2>wanterr || status=$?
        echo "exit $status" >>want
        run python $script
        echo "exit $status" >>out
        diff want out
        diff wanterr err
    done'

test_expect "arguments after SCRIPT are the script'\''s, options included" '
    py "import sys" "print(sys.argv)"
    run python --timeout 2 s.py --timeout x -v
    expect_status 0
    expect_out "['\''s.py'\'', '\''--timeout'\'', '\''x'\'', '\''-v'\'']"'

test_expect "a bad device option is a usage error" '
    py "pass"
    run python --timeout abc s.py
    expect_status 2
    run python --schedule sideways s.py
    expect_status 2
    expect_err "neuronop python: error: --schedule takes parallel, sequential, reversed or shuffle, not '\''sideways'\''"
    expect_err "see '\''neuronop python --help'\''"
    run python --device nosuch s.py
    expect_status 2'

test_expect "--memcheck reaches the package, and only when given" '
    py "import os" "print(\"memcheck=%s\" % os.environ.get(\"NEURONOP_MEMCHECK\"))"
    run python --memcheck s.py
    expect_status 0
    expect_out "memcheck=1"
    status=0
    NEURONOP_MEMCHECK=1 "$NEURONOP" python s.py >out 2>err || status=$?
    test "$status" = 0
    grep -qx "memcheck=None" out'

test_expect "modules beside the script import, as under python itself" '
    mkdir sub
    printf "VALUE = 42\n" >sub/helper.py
    printf "import helper\nprint(helper.VALUE)\n" >sub/main.py
    run python sub/main.py
    expect_status 0
    expect_out 42'

# a new user's find: the folder of the link came first on sys.path, not the script's
test_expect "a link to a script imports what is beside the script, as under python itself" '
    mkdir real links
    printf "VALUE = 7\n" >real/helper.py
    printf "import helper\nprint(helper.VALUE)\n" >real/main.py
    ln -s ../real/main.py links/main.py
    run python links/main.py
    expect_status 0
    expect_out 7
    test "$(/usr/bin/python3 links/main.py)" = 7'

test_expect "torch_neuronx.xla_impl.custom_op is neuronop'\''s under the launcher" '
    py "from torch_neuronx.xla_impl import custom_op" "import neuronop.custom_op as ours" \
       "print(custom_op.load is ours.load, custom_op.load_library is ours.load_library)"
    run python s.py
    expect_status 0
    expect_out "True True"'

test_expect "plain python3 does not see the compatibility package" '
    py "import torch_neuronx"
    status=0
    PYTHONPATH="$NEURONOP_SRC/python" /usr/bin/python3 s.py >out 2>err || status=$?
    test "$status" = 1
    grep -q "No module named '\''torch_neuronx'\''" err'

test_expect "a real torch_neuronx on the path wins over the compatibility package" '
    mkdir -p torch_neuronx
    printf "REAL = True\n" >torch_neuronx/__init__.py
    py "import torch_neuronx" "print(getattr(torch_neuronx, \"REAL\", False))"
    run python s.py
    expect_status 0
    expect_out True'

# with_python PYTHON: runs s.py under neuronop python with NEURONOP_PYTHON=PYTHON; sets
# $status, and out and err in the current folder
with_python() {
    status=0
    NEURONOP_PYTHON=$1 "$NEURONOP" python s.py >out 2>err || status=$?
}

test_expect "NEURONOP_PYTHON chooses the Python" '
    printf "#!/bin/sh\necho chosen >&2\nexec /usr/bin/python3 \"\$@\"\n" >mypy
    chmod +x mypy
    py "print(\"ran\")"
    with_python "$WORK/mypy"
    test "$status" = 0
    grep -q chosen err
    grep -q ran out
    with_python "$WORK/none"
    test "$status" = 2
    grep -q "neuronop: error: cannot run Python '\''$WORK/none'\''" err
    mkdir -p bin
    ln -sf "$WORK/mypy" bin/mypython
    export PATH="$WORK/bin:$PATH"
    with_python mypython
    test "$status" = 0
    grep -q ran out'

# python3 -S has no site folders, so no Debian torch; the launcher's own path still has neuronop
test_expect "a Python without torch says so when the script imports neuronop" '
    printf "#!/bin/sh\nexec /usr/bin/python3 -S \"\$@\"\n" >notorch
    chmod +x notorch
    py "import neuronop"
    with_python "$WORK/notorch"
    test "$status" = 1
    grep -q "ModuleNotFoundError: neuronop needs torch, and this Python (/usr/bin/python3) has none: install python3-torch, or choose a Python that has it with NEURONOP_PYTHON" err'

copy_example negate "$WORK/negate"
"$NEURONOP" build "$WORK/negate" >/dev/null
test_expect "--stats prints each op'\''s calls and modeled device time at exit" '
    py "import torch" "from neuronop import custom_op" \
       "custom_op.load_library(\"negate/build/libnegate.so\")" \
       "for _ in range(3): torch.ops.negate.negate(torch.ones(4, 4))"
    run_alone python --stats s.py
    expect_status 0
    expect_err "calls"
    grep -E "^neuronop: negate::negate +3 +[0-9.]+ +[0-9.]+$" err'

test_expect "--stats divides device time by the calls it modeled, not by the failed ones" '
    py "import torch, neuronop" "from neuronop import custom_op" \
       "custom_op.load_library(\"negate/build/libnegate.so\")" \
       "torch.ops.negate.negate(torch.ones(64, 64))" \
       "for _ in range(9):" \
       "    try: torch.ops.negate.negate(torch.ones(2, 2, dtype=torch.int32))" \
       "    except neuronop.DeviceError: pass" \
       "s = neuronop.stats()[\"negate::negate\"]" \
       "print(s[\"calls\"], s[\"modeled_calls\"], \"%.4f\" % (1e3 * s[\"device_seconds\"]))"
    run_alone python --stats s.py
    expect_status 0
    set -- $(cat out)
    test "$1 $2" = "10 1"
    grep -E "^neuronop: negate::negate +10 +[0-9.]+ +$3\$" err'

# Before: any value of NEURONOP_STATS, "0" too, turned statistics on (NEURONOP_MEMCHECK=0 is
# off).  Plain python3 with the package, so that the environment is the user's own.
test_expect "NEURONOP_STATS=0 is off, as NEURONOP_MEMCHECK=0 is" '
    py "import torch, neuronop" "from neuronop import custom_op" \
       "custom_op.load_library(\"negate/build/libnegate.so\")" \
       "torch.ops.negate.negate(torch.ones(4, 4))" \
       "print(neuronop.stats()[\"negate::negate\"][\"device_seconds\"])"
    for v in 0 1; do
        NEURONOP_STATS=$v PYTHONPATH="$NEURONOP_SRC/python" /usr/bin/python3 s.py >out.$v
    done
    test "$(cat out.0)" = None
    test "$(cat out.1)" != None'

copy_example relu_multicore "$WORK/multi"
"$NEURONOP" build "$WORK/multi" >/dev/null
test_expect "--cores above the device profile core count is a usage error, as for run" '
    py "pass"
    run run --cores 9 multi/build/librelu_multicore.so relu_forward ones:4
    expect_status 2
    mv err run.err
    run python --cores 9 s.py
    expect_status 2
    sed "s/neuronop run/neuronop python/" run.err | cmp - err'

test_expect "under --cores a single-core library is refused as run refuses it; a multicore one runs" '
    py "import torch, neuronop" "from neuronop import custom_op" \
       "custom_op.load_library(\"multi/build/librelu_multicore.so\")" \
       "x = torch.randn(33, 100)" \
       "print(torch.equal(torch.ops.relu_multicore.relu_forward(x), torch.relu(x)))" \
       "try: custom_op.load_library(\"negate/build/libnegate.so\")" \
       "except neuronop.InputError as e: print(e)"
    run run --cores 4 negate/build/libnegate.so negate ones:2x2
    expect_status 2
    mv err run.err
    run_alone python --cores 4 s.py
    expect_status 0
    # (the exception says what run says, as an error of no command line)
    { echo True; sed -n "s/^neuronop run: error: /neuronop: error: /p" run.err; } >want
    diff want out'

test_done
