#!/bin/sh
# FAILS NOW (red team; a case's argument files outside the library folder are refused, "a
# case's arguments are made by its worker, which reads only the library folder", and TRUST
# in neuronop-run(1) keeps files outside the library out of CI logs): a case's expect file
# is read by neuronop itself, wherever it leads (an absolute path, or a link the pull request
# commits), and the failure prints its values ("expected 49"): a .npy file of the machine's,
# outside the library, reaches the log, three elements a case (which elements a kernel
# chooses, by making only those NaN).
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

test_done
