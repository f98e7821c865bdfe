#!/bin/sh
# The standard names a C++ source gets from <torch/torch.h> alone are libtorch 1.13's: a
# kernel that uses std::max, std::array, std::accumulate ... and host code that uses
# std::vector, std::string, std::function ... without including their headers compile
# against the real libtorch, so they build with neuronop too.  tests/fixtures/cxx/stdnames:
# k.cpp and shape.cpp are compiled unmodified by both; probe.sh asks g++, name by name
# (names.txt), what a unit that includes only <torch/torch.h> can use, libtorch's answer
# being the expectation and names.txt saying why where neuronop's is not the same.
# libtorch's probe takes about 20 s, and compiling the kernel against libtorch 10 s, so their
# answers are cached under out/ by the sources' hash (make check computes them before the
# tests, as the idiom suite's oracle).
# Without the libtorch-dev headers the libtorch halves are skipped.
. ./lib.sh

fix="$NEURONOP_SRC/tests/fixtures/cxx/stdnames"
torch_h=/usr/include/torch/csrc/api/include/torch/torch.h
cp -R "$fix" "$WORK/stdnames"
rm -rf "$WORK/stdnames/build"

# test_torch NAME BODY: a test that needs libtorch's headers, skipped without them
test_torch() {
    if [ -f "$torch_h" ]; then
        test_expect "$@"
    else
        test_count=$((test_count + 1))
        echo "ok $test_count # skip $1: no libtorch 1.13 headers (libtorch-dev)"
    fi
}

test_expect "a kernel and a shape function that use standard names without their headers build" '
    run build stdnames
    expect_status 0
    expect_out "ops: std_names(tensor, double)"'

# one unit of both, as a unit that includes libtorch's header takes 10 s to compile: its
# answer is cached as the names' is (make check asks before the tests)
test_torch "the same kernel and shape function compile against libtorch 1.13" '
    cache=$(sh "$fix/probe.sh" unit "$NEURONOP_SRC/out")
    cat "$cache"
    test "$(head -n 1 "$cache")" = "status 0"'

# out[i] = clamp(sqrt(|x|) + max(x, 0), -limit, limit), then out[0] = the sum of the first
# three, largest first, and out[1] = the largest less the smallest
x="[4.0, -9.0, 2.25, 100.0, -0.25]"
test_torch "the kernel computes what torch computes, bit for bit" '
    /usr/bin/python3 -c "import numpy; numpy.save(\"x.npy\", numpy.array($x, numpy.float32))"
    run run stdnames std_names x.npy 5.0 -o y.npy
    expect_status 0
    want=$(torch_says "
import torch
x = torch.tensor($x)
y = torch.clamp(torch.sqrt(torch.abs(x)) + torch.clamp(x, min=0), -5.0, 5.0)
top = sorted(y[:3].tolist(), reverse=True)
s = torch.tensor(0.0)
for v in top:
    s = s + torch.tensor(v)
y[1] = torch.tensor(top[0]) - torch.tensor(top[2])
y[0] = s
print(y.numpy().tobytes().hex())")
    got=$(tail -c 20 y.npy | od -An -tx1 | tr -d " \n")
    echo "torch: $want, neuronop: $got"
    test "$got" = "$want"'

test_torch "each name of names.txt is usable with neuronop as with libtorch, or names.txt says why not" '
    cache=$(sh "$fix/probe.sh" libtorch "$NEURONOP_SRC/out")
    sh "$fix/probe.sh" neuronop "$NEURONOP_SHARE_DIR" >neuronop.txt
    grep -v "^#" "$fix/names.txt" | cut -f3 >why.txt
    paste -d "|" "$cache" neuronop.txt why.txt >both.txt
    bad=0
    while IFS="|" read -r torch ours why; do
        if [ "$torch" = "$ours" ] && [ -n "$why" ]; then
            echo "names.txt says why neuronop differs, but it does not: $torch ($why)"
            bad=1
        elif [ "$torch" != "$ours" ] && [ -z "$why" ]; then
            echo "libtorch: $torch"
            echo "neuronop: $ours"
            bad=1
        fi
    done <both.txt
    test "$bad" = 0'

test_done
