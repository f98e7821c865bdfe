#!/bin/sh
# A library rebuilt while a Python process uses it: the next call runs the new code.  Each
# library a kept device runs has a zygote whose children load it before their calls come;
# a rebuild (a new file at the same path) must start that zygote again, not serve the call
# from a child that loaded the old one.  Expectations come from torch itself.
. ./lib.sh

copy_example negate "$WORK/neg"
cat >"$WORK/rebuild.py" <<'EOT'
import subprocess
import sys

import torch
from neuronop import custom_op

neuronop, folder = sys.argv[1], sys.argv[2]
library = folder + "/build/libnegate.so"


def build():
    subprocess.run([neuronop, "build", folder], check=True, stdout=subprocess.DEVNULL)
    custom_op.load_library(library)   # again after the rebuild: harmless


x = torch.randn(3, 5)
build()
for _ in range(3):   # the zygote is warm, and its spare has the library loaded
    assert torch.equal(torch.ops.negate.negate(x), torch.neg(x))
src = open(folder + "/negate.c").read()
open(folder + "/negate.c", "w").write(
    src.replace("-nt_get_f32(&in, i, j)", "2 * nt_get_f32(&in, i, j)"))
build()
got = torch.ops.negate.negate(x)
assert torch.equal(got, torch.mul(x, 2)), "the old library answered: %s" % got
print("ok")
EOT

test_expect "a library rebuilt between calls answers with its new code" '
    run python "$WORK/rebuild.py" "$NEURONOP" "$WORK/neg"
    expect_status 0
    expect_out "ok"'

test_done
