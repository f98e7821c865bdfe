#!/bin/sh
# failures.sh DIR - prints what each failed end-to-end test printed, as tests/e2e/lib.sh kept
# it in DIR (a file per script), after prove's summary: a CI log read from its end, or cut to
# its last lines, still says why a test failed, not only which.  A script that died outside
# its tests, or a unit program, kept nothing: its reason is in prove's output above.
dir=$1
kept=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    kept=1
    echo
    echo "=== what failed in ${f##*/} (the last 80 lines)"
    tail -n 80 "$f"
done
if [ "$kept" = 0 ]; then
    echo
    echo "=== no test kept its output: a script that died outside its tests, or a unit" \
        "program, failed; its reason is in prove's output above"
fi
