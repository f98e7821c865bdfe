#!/bin/sh
# failures.sh DIR - prints what each failed end-to-end test printed, as tests/e2e/lib.sh kept
# it in DIR (a file per script), after prove's summary: a CI log read from its end, or cut to
# its last lines, still says why a test failed, not only which.
dir=$1
[ -d "$dir" ] || exit 0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    echo
    echo "=== what failed in ${f##*/} (the last 80 lines)"
    tail -n 80 "$f"
done
