#!/bin/sh
# Every run-time diagnostic of the rule fixtures, pinned by a golden file: each line of
# tests/golden/run/cases runs one op of a fixture, and NAME.expected beside it holds the exit
# status and the exact stderr of `neuronop run`, with addresses of six or more hex digits
# (which move with ASLR) written 0xADDR and AddressSanitizer's one swapcontext warning of a
# sanitized build left out.  `make golden` rewrites them.
. ./lib.sh

golden="$NEURONOP_SRC/tests/golden/run"
cp -R "$NEURONOP_SRC/tests/fixtures/." "$WORK/"
# Build every library first, so no case's stderr depends on whether it ran first.
grep -v '^#' "$golden/cases" | while read -r name lib op args; do
    [ -n "$name" ] || continue
    case $args in *--memcheck*) mc=--memcheck ;; *) mc= ;; esac
    (cd "$WORK" && "$NEURONOP" build $mc "$lib" >/dev/null 2>&1) || echo "# cannot build $lib"
done
grep -v '^#' "$golden/cases" | while read -r name lib op args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086  # the arguments are words on purpose
    (cd "$WORK" && status=0 && "$NEURONOP" run "$lib" "$op" $args --schedule sequential \
        --timeout 1 >/dev/null 2>"$name.stderr" || status=$?; \
        { printf 'exit %s\n' "$status"; sed -e '/^==[0-9]*==WARNING: ASan doesn.t fully support/d' \
        -e 's/0x[0-9a-f]\{6,\}/0xADDR/g' "$name.stderr"; } \
        >"$name.actual")
    if [ "${NEURONOP_GOLDEN_UPDATE:-}" = 1 ]; then
        cp "$WORK/$name.actual" "$golden/$name.expected"
    fi
    echo "$name" >>"$WORK/.names"
done
while read -r name; do
    test_expect "run diagnostic: $name" "diff -u '$golden/$name.expected' '$WORK/$name.actual'"
done <"$WORK/.names"

# A case cxx-NAME is the C++ twin of case NAME: the same op breaking the same rule through
# the torch API (tests/fixtures/cxx/).  Its message may name the C++ call instead of the C
# one, but the report must be the same: the exit status, the first error line's
# "neuronop: OP: core N: error:" (the first warning's when there is no error) and the count
# of errors and warnings, the C++ op's namespace (my_ops::) aside.  Compared on this run's
# reports, not on the golden files.
report_key() {
    sed -n 1p "$1"
    sed 's/^neuronop: [A-Za-z_][A-Za-z0-9_]*::/neuronop: /' "$1" | awk '/^neuronop: / {
             i = index($0, ": error:"); if (i && e == "") e = substr($0, 1, i + 7)
             j = index($0, ": warning:"); if (j && w == "") w = substr($0, 1, j + 9) }
         END { print (e != "" ? e : w) }'
    grep '^neuronop: device checks:' "$1"
}
while read -r name; do
    case $name in cxx-*) ;; *) continue ;; esac
    test_expect "C++ twin reports as its C case: $name" "
        grep -qx '${name#cxx-}' .names || { echo 'no C case ${name#cxx-} for $name'; exit 1; }
        report_key '${name#cxx-}.actual' >'$name.ckey'
        report_key '$name.actual' >'$name.cxxkey'
        diff -u '$name.ckey' '$name.cxxkey'"
done <"$WORK/.names"
test_expect "every C case has a C++ twin, or a reason in the cases file why not" '
    sed -n "s/^# no-twin \([^ ]*\) .*/\1/p" "$golden/cases" >no-twin
    bad=0
    while read -r name; do
        case $name in cxx*) continue ;; esac
        if grep -qx "cxx-$name" .names; then
            if grep -qx "$name" no-twin; then echo "$name has a twin and a no-twin line"; bad=1; fi
        elif ! grep -qx "$name" no-twin; then
            echo "$name: no case cxx-$name and no no-twin line"; bad=1
        fi
    done <.names
    [ "$bad" = 0 ]'
test_done
