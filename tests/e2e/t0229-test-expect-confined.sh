#!/bin/sh
# A case's expect file stays in the library folder, as its argument files do (red team;
# TRUST in neuronop-run(1) keeps files outside the library out of CI logs): neuronop test
# read an expect file wherever it led (an absolute path, or a link the pull request
# commits), and the failure printed its values ("expected 49"), which elements a kernel
# chose by making only those NaN.  One outside is now a manifest error, exit 2.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }

mkdir -p "$WORK/outside"
npy write "$WORK/outside/secret.npy" '<f4' 1x4 7 14 21 49
copy_example relu "$WORK/lib"
ln -s "$WORK/outside/secret.npy" "$WORK/lib/tests/link.npy"
cat >>"$WORK/lib/neuronop.yaml" <<EOT
  - name: linked
    op: relu_forward
    args: [zeros:1x4]
    expect: tests/link.npy
  - name: absolute
    op: relu_forward
    args: [zeros:1x4]
    expect: $WORK/outside/secret.npy
EOT

test_expect "an expect file outside the library folder is refused, its values never shown" '
    run test lib -k linked
    expect_status 2
    expect_err "error: expect file '\''tests/link.npy'\'' of test '\''linked'\'' is outside the library folder (it resolves to '\''$WORK/outside/secret.npy'\'')"
    if grep -q "expected 49" out err; then exit 1; fi
    sed -i "/name: linked/,/expect: tests.link.npy/d" lib/neuronop.yaml
    run test lib -k absolute
    expect_status 2
    expect_err "error: expect file '\''$WORK/outside/secret.npy'\'' of test '\''absolute'\'' is outside the library folder"
    expect_err "copy the file there"
    if grep -q "expected 49" out err; then exit 1; fi'

# A link to one of neuronop's own descriptors (/proc/self/fd/N leads to "pipe:[5]", which
# no path resolves) counted as a file still to be made inside the folder, and neuronop test
# opened whatever its descriptor N was (a review).  A link to what is missing is refused.
copy_example relu "$WORK/fdlink"
ln -sf /proc/self/fd/0 "$WORK/fdlink/tests/relu_forward.npy"
test_expect "an expect file linked to a descriptor of neuronop'\''s is refused" '
    status=0
    echo | "$NEURONOP" test fdlink >"$WORK/out" 2>"$WORK/err" || status=$?
    expect_status 2
    expect_err "error: expect file '\''tests/relu_forward.npy'\'' of test"
    expect_err "is outside the library folder"'

test_done
