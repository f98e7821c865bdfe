#!/bin/sh
# Inputs that would exhaust or hang neuronop are refused at once with what they are: a
# .npy "file" that is /dev/zero, a FIFO or a directory; a manifest whose nested aliases
# would expand a few hundred bytes exponentially (billion laughs), or whose nesting would
# take libyaml's loader minutes.
. ./lib.sh
copy_example relu_tcm "$WORK/lib"
"$NEURONOP" build "$WORK/lib" >/dev/null

test_expect "/dev/zero as a tensor is refused, not read until memory runs out" '
    status=0
    timeout 10 "$NEURONOP" run lib relu_forward /dev/zero >out 2>err || status=$?
    test "$status" = 2 || { echo "status $status"; cat err; exit 1; }
    grep -qF "neuronop: error: .npy file '\''/dev/zero'\'' is not a regular file" err'

test_expect "a FIFO as a tensor is refused without waiting for a writer" '
    mkfifo pipe.npy
    status=0
    timeout 10 "$NEURONOP" run lib relu_forward pipe.npy >out 2>err || status=$?
    test "$status" = 2 || { echo "status $status"; cat err; exit 1; }
    grep -qF "neuronop: error: .npy file '\''pipe.npy'\'' is not a regular file" err'

test_expect "a directory as a tensor says it is a directory" '
    mkdir dir.npy
    run run lib relu_forward dir.npy
    expect_status 2
    expect_err "neuronop: error: .npy file '\''dir.npy'\'' is a directory"'

test_expect "a FIFO as a source file is named as such, not as missing" '
    copy_example relu_tcm "$WORK/fifo"
    rm fifo/relu.c
    mkfifo fifo/relu.c
    status=0
    timeout 10 "$NEURONOP" build fifo >out 2>err || status=$?
    test "$status" = 2 || { echo "status $status"; cat err; exit 1; }
    grep -qF "error: source file '\''relu.c'\'' is not a regular file" err'

test_expect "nested YAML aliases (billion laughs) are refused in milliseconds" '
    mkdir laughs
    {
        echo "name: laughs"
        echo "compute_srcs: [k.c]"
        echo "shape_srcs: [k.c]"
        echo "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"
        i=1
        while [ $i -le 10 ]; do
            p=$((i - 1))
            echo "l$i: &l$i [*l$p, *l$p, *l$p, *l$p, *l$p, *l$p, *l$p, *l$p, *l$p, *l$p]"
            i=$((i + 1))
        done
    } >laughs/neuronop.yaml
    : >laughs/k.c
    status=0
    timeout 5 "$NEURONOP" build laughs >out 2>err || status=$?
    test "$status" = 2 || { echo "status $status"; cat err; exit 1; }
    grep -qF "laughs/neuronop.yaml:5:10: error: YAML aliases ('\''*l0'\'') are not supported" err'

# (a red team's find: libyaml's loader takes time with the square of the depth, and the
# depth was checked after it: 400 KB of '\''['\'' took minutes)
test_expect "200000 nested brackets are refused in milliseconds, where the 65th level is" '
    mkdir deep
    { echo "name: deep"; printf "args: "; head -c 200000 /dev/zero | tr "\0" "["
      head -c 200000 /dev/zero | tr "\0" "]"; echo; } >deep/neuronop.yaml
    status=0
    timeout 10 "$NEURONOP" build deep >out 2>err || status=$?
    test "$status" = 2 || { echo "status $status"; cat err; exit 1; }
    grep -qF "deep/neuronop.yaml:2:71: error: nesting deeper than 64 levels" err'

test_expect "a manifest larger than 1 MiB is refused before it is parsed" '
    mkdir big
    { echo "name: big"; head -c 1100000 /dev/zero | tr "\0" "#"; echo; } >big/neuronop.yaml
    run build big
    expect_status 2
    expect_err "is 1100011 bytes, more than the 1048576 a YAML file may have"'

test_done
