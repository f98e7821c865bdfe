#!/bin/sh
# A library rebuilt while a Python process uses it: the next call runs the new code, whether
# or not the script loads the library again.  Each library a kept device runs has a zygote
# whose children load it before their calls come: a rebuild (a new file at the same path)
# must start that zygote again, not serve the call from a child that loaded the old one.
# With NEURONOP_SANDBOX=off the supervisor keeps each library loaded itself: a rebuild must
# make it load the new file, and a library loaded again must not get the loader's copy of
# the old one.  A rebuild may list the ops in another order, or leave one out: a call runs
# the op it names, or raises InputError, never the op now at its old index.  One Python
# process (importing torch costs seconds) goes through every case.  Expectations come from
# torch itself.
. ./lib.sh

copy_example negate "$WORK/neg"
# a library of two ops of one signature, neg and dbl, and manifests that list them in
# either order, or dbl alone: a rebuild moves an op to another index, or leaves it out
mkdir -p "$WORK/order"
cat >"$WORK/order/k.c" <<'K'
#include <neuronop.h>
nt_tensor *neg(const nt_tensor *x) { return nt_mul_s_out(get_dst_tensor(), x, nt_scalar_i(-1)); }
nt_tensor *dbl(const nt_tensor *x) { return nt_mul_s_out(get_dst_tensor(), x, nt_scalar_i(2)); }
K
cat >"$WORK/order/s.c" <<'S'
#include <neuronop.h>
nt_tensor *same(const nt_tensor *x) { return nt_empty(nt_dim(x), nt_sizes(x), nt_dtype_of(x)); }
S
for m in "neg dbl" "dbl neg" "dbl"; do
    { printf '%s\n' 'name: order' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'ops:'
      for op in $m; do printf '  %s: {args: [tensor], shape: same, kernel: %s}\n' $op $op; done
    } >"$WORK/order/$(echo $m | tr ' ' _).yaml"
done
cat >"$WORK/rebuild.py" <<'EOT'
import os
import subprocess
import sys

import torch
from neuronop import _client, custom_op, errors

neuronop, folder = sys.argv[1], sys.argv[2]
library = folder + "/build/libnegate.so"
source = folder + "/negate.c"
negating = open(source).read()
x = torch.randn(3, 5)


def build(k, again):
    """Rebuilds the library with an op that multiplies by k (the example's negates)."""
    with open(source, "w") as f:
        f.write(negating.replace("-nt_get_f32(&in, i, j)", "%d * nt_get_f32(&in, i, j)" % k))
    subprocess.run([neuronop, "build", folder], check=True, stdout=subprocess.DEVNULL)
    if again:
        custom_op.load_library(library)   # again after a rebuild: harmless


k = 2
build(k, True)
for sandbox in ("on", "off"):
    os.environ["NEURONOP_SANDBOX"] = sandbox
    _client.supervisor().close()   # the next call starts one that inherits the setting
    for again in (False, True):
        # three calls: the zygote is warm and its spare has the library loaded, or the
        # supervisor has it loaded (these calls after a failed case may fail too)
        for _ in range(3):
            if not torch.equal(torch.ops.negate.negate(x), torch.mul(x, k)):
                print("sandbox %s: a call before the rebuild ran other code" % sandbox)
        k += 1
        build(k, again)
        got = torch.ops.negate.negate(x)
        print("sandbox %s, %s: %s" % (sandbox, "loaded again" if again else "not loaded again",
                                      "new code" if torch.equal(got, torch.mul(x, k))
                                      else "the old code answered %s" % got))

# a rebuild that changes the op's signature: torch cannot redefine a schema, so loading it is
# refused, and the op as loaded says why rather than sending the new library the old call
os.environ["NEURONOP_SANDBOX"] = "on"
_client.supervisor().close()
files = {p: open(folder + "/" + p).read() for p in ("neuronop.yaml", "negate.c", "shape.c")}


def retype(two):
    """Rebuilds with the op taking (tensor, double) when two, else (tensor) again."""
    for p, text in files.items():
        if two:
            text = (text.replace("args: [tensor]", "args: [tensor, double]")
                        .replace("(const nt_tensor *t_in)", "(const nt_tensor *t_in, double k)")
                        .split("tests:")[0])   # (whose cases give one argument)
        with open(folder + "/" + p, "w") as f:
            f.write(text)
    subprocess.run([neuronop, "build", folder], check=True, stdout=subprocess.DEVNULL)


def outcome(call):
    try:
        call()
        return "no error"
    except errors.InputError as e:
        return e.message


# (a new user's finds: a rebuilt signature, called without loading it again, was only "argument
# 2 ... must be a double"; and, once refused at loading, the op stayed refused after the
# library was rebuilt back, until it was loaded again)
torch.ops.negate.negate(x)   # a supervisor, and a plan, that read the library as it was
retype(True)
print("signature change, not loaded again, calling it: %s"
      % outcome(lambda: torch.ops.negate.negate(x)))
_client.supervisor().close()   # one that reads the rebuilt library (the package finds it)
print("signature change, a new supervisor, calling it: %s"
      % outcome(lambda: torch.ops.negate.negate(x)))
for what, call in (("loading it", lambda: custom_op.load_library(library)),
                   ("calling it", lambda: torch.ops.negate.negate(x))):
    print("signature change, %s: %s" % (what, outcome(call)))
retype(False)
print("signature back, not loaded again:", torch.equal(torch.ops.negate.negate(x), torch.mul(x, k)))
custom_op.load_library(library)
print("signature back:", torch.equal(torch.ops.negate.negate(x), torch.mul(x, k)))

# a rebuild that moves an op to another index, or leaves it out: a call runs the op it names
# or raises, never the op the rebuild put at its old index
order = os.path.join(os.path.dirname(folder), "order")


def reorder(ops):
    os.replace(os.path.join(order, ops + ".yaml"), os.path.join(order, "neuronop.yaml"))
    subprocess.run([neuronop, "build", order], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(order, ops + ".yaml"), "w") as f:   # (for the next case)
        f.write(open(os.path.join(order, "neuronop.yaml")).read())


def answers(name):
    try:
        got = getattr(torch.ops.order, name)(x)
    except errors.InputError as e:
        return "InputError: " + e.message
    for op, want in (("neg", torch.mul(x, -1)), ("dbl", torch.mul(x, 2))):
        if torch.equal(got, want):
            return op
    return "other values"


for sandbox in ("on", "off"):
    os.environ["NEURONOP_SANDBOX"] = sandbox
    _client.supervisor().close()
    for again in (False, True):
        reorder("neg_dbl")
        custom_op.load_library(order + "/build/liborder.so")
        assert (answers("neg"), answers("dbl")) == ("neg", "dbl")
        for ops in ("dbl_neg", "dbl"):
            reorder(ops)
            if again:
                custom_op.load_library(order + "/build/liborder.so")
            print("sandbox %s, %s, rebuilt as %s: neg ran %s; dbl ran %s"
                  % (sandbox, "loaded again" if again else "not loaded again", ops,
                     answers("neg"), answers("dbl")))
    # a supervisor started after the rebuild (the last one ended, or died) reads the rebuilt
    # file anew: a call still runs the op it names there, not the one at its old index
    for ops in ("dbl_neg", "dbl"):
        reorder("neg_dbl")
        custom_op.load_library(order + "/build/liborder.so")
        reorder(ops)
        _client.supervisor().close()
        print("sandbox %s, a new supervisor, rebuilt as %s: neg ran %s; dbl ran %s"
              % (sandbox, ops, answers("neg"), answers("dbl")))
print("done")
EOT
run python "$WORK/rebuild.py" "$NEURONOP" "$WORK/neg"

test_expect "the script runs to its end" '
    expect_status 0
    expect_out done'
for sandbox in on off; do
    for again in "not loaded again" "loaded again"; do
        test_expect "sandbox $sandbox: a library rebuilt between calls and $again runs its new code" "
            expect_out 'sandbox $sandbox, $again: new code'"
    done
done

test_expect "a rebuild that changes an op signature is refused at loading and at calling" '
    expect_out "signature change, loading it: op '\''negate::negate'\'' was loaded as negate(Tensor t_in) -> Tensor and"
    expect_out "restart Python to load the new signature"
    expect_out "signature change, calling it: op '\''negate::negate'\'' was loaded as negate(Tensor t_in) -> Tensor, and"
    expect_out "restart Python to call the new one"
    expect_out "signature change, not loaded again, calling it: '\''$WORK/neg/build/libnegate.so'\'' was rebuilt since the op was loaded, as negate(tensor, double): torch cannot change a defined op'\''s schema; restart Python"
    expect_out "signature change, a new supervisor, calling it: '\''$WORK/neg/build/libnegate.so'\'' was rebuilt since the op was loaded, as negate(tensor, double): torch cannot change a defined op'\''s schema; restart Python"
    expect_out "signature back, not loaded again: True"
    expect_out "signature back: True"'

gone="neg ran InputError: .*rebuilt without it since it was loaded; dbl ran dbl"
for sandbox in on off; do
    for again in "not loaded again" "loaded again"; do
        test_expect "sandbox $sandbox, $again: a rebuild that reorders ops runs each by name" "
            expect_out 'sandbox $sandbox, $again, rebuilt as dbl_neg: neg ran neg; dbl ran dbl'"
        test_expect "sandbox $sandbox, $again: an op a rebuild left out raises InputError" "
            grep -q '^sandbox $sandbox, $again, rebuilt as dbl: $gone' out"
    done
    test_expect "sandbox $sandbox: a supervisor started after a rebuild runs each op by name" "
        expect_out 'sandbox $sandbox, a new supervisor, rebuilt as dbl_neg: neg ran neg; dbl ran dbl'
        grep -q '^sandbox $sandbox, a new supervisor, rebuilt as dbl: $gone' out"
done

test_done
