#!/bin/sh
# No supervisor outlives its Python: a Python process SIGKILLed while a call spins (a shape
# function that blocks every signal) takes with it the supervisor, its zygote and the
# zygote's child within moments, not at the call's --timeout (neuronop-python(1)).  The
# supervisor dies with its parent process; its workers die with it.
. ./lib.sh
. ./hostile_parent.sh

cat >"$WORK/spin.py" <<'EOT'
import sys

import torch
from neuronop import custom_op

custom_op.load_library(sys.argv[1])
print("calling", flush=True)
torch.ops.hostile_parent.immortal(torch.zeros(4))
EOT

# (four processes: Python, the supervisor, the zygote and its child)
test_expect "Python SIGKILLed during a spinning call leaves no supervisor or worker" '
    stopped KILL 4 python --timeout 100 spin.py "$WORK/hp/build/libhostile_parent.so"'

# the signal that ends the supervisor comes when the thread that started it ends, too: the
# supervisor must go on serving while the Python process lives
cat >"$WORK/thread.py" <<'EOT'
import sys
import threading
import time

import torch
from neuronop import _client, custom_op

x = torch.zeros(4)
t = threading.Thread(target=lambda: custom_op.load_library(sys.argv[1]))   # starts it
t.start()
t.join()
first = _client.supervisor().pid()
time.sleep(0.5)
torch.ops.hostile_parent.fine(x)
print("same supervisor" if _client.supervisor().pid() == first else "another supervisor")
EOT
test_expect "the supervisor outlives the Python thread that started it" '
    run python thread.py "$WORK/hp/build/libhostile_parent.so"
    expect_status 0
    expect_out "same supervisor"'

# python does not wait for a daemon thread at exit, and neither does the package: a script
# whose daemon thread is in a spinning call ends when its main thread does, not at the call's
# --timeout (a new user's find: the exit waited for the call), and leaves nothing running
cat >"$WORK/daemon.py" <<'EOT'
import sys
import threading
import time

import torch
from neuronop import custom_op

custom_op.load_library(sys.argv[1])
threading.Thread(target=lambda: torch.ops.hostile_parent.immortal(torch.zeros(4)),
                 daemon=True).start()
time.sleep(0.5)
print("main thread done", flush=True)
EOT
test_expect "a daemon thread in a call does not hold up the exit, nor outlive it" '
    start=$(date +%s)
    status=0
    rm -f sid
    in_session sid "$NEURONOP" python --timeout 30 daemon.py \
        "$WORK/hp/build/libhostile_parent.so" >out 2>err || status=$?
    took=$(($(date +%s) - start))
    expect_status 0
    expect_out "main thread done"
    [ "$took" -lt 20 ] || { echo "the exit took $took s"; exit 1; }
    all_gone "$(cat sid)"   # the supervisor and its workers die with python, within moments'

test_done
