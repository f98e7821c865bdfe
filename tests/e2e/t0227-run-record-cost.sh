#!/bin/sh
# A worker's records cost neuronop only what their kind can hold (red team: TRUST in
# neuronop-run(1), "every record is checked before anything is allocated for it").  Fixture
# bigrecords' kernel writes its own records on the worker's pipe: an output of N bytes, then
# printf text of N bytes.  neuronop held the output, the printf record's block and a copy of
# it at once (3N: 617 MiB for N = 200 MiB); now a printf record larger than the device's
# printf buffer is malformed at its header, before anything is allocated for it.
. ./lib.sh
if [ -n "${NEURONOP_SANITIZED:-}" ]; then
    echo "1..0 # skip AddressSanitizer's quarantine holds freed memory, so the parent's peak says nothing of what it keeps"
    exit 0
fi

[ -x /usr/bin/time ] || { echo "ok 1 # skip no /usr/bin/time"; echo "1..1"; exit 0; }
cp -r "$NEURONOP_SRC/tests/fixtures/bigrecords" "$WORK/br"
"$NEURONOP" build "$WORK/br" >/dev/null 2>&1

# N = 200 MiB: 400 MiB came; neuronop's own memory (about 20 MiB) aside, 500 MiB is ample
test_expect "two records of 200 MiB cost neuronop no more than the bytes that came" '
    /usr/bin/time -f "maxrss %M" "$NEURONOP" run --timeout 30 br big zeros:200 >out 2>err || true
    rss=$(sed -n "s/^maxrss //p" err)
    echo "neuronop held at most $rss KiB"
    [ "$rss" -lt 512000 ]'

test_done
