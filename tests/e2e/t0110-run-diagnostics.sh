#!/bin/sh
# Every run-time diagnostic of the rule fixtures, pinned by a golden file: each line of
# tests/golden/run/cases runs one op of a fixture, and NAME.expected beside it holds the exit
# status and the exact stderr of `neuronop run`, with addresses of six or more hex digits
# (which move with ASLR) written 0xADDR and AddressSanitizer's one swapcontext warning of a
# sanitized build left out.  `make golden` rewrites them.
. ./lib.sh

golden="$NEURONOP_SRC/tests/golden/run"
cp -R "$NEURONOP_SRC/tests/fixtures/." "$WORK/"
grep -v '^#' "$golden/cases" | while read -r name lib op args; do
    [ -z "$name" ] || echo "$name $lib $op $args"
done >"$WORK/.cases"
cut -d' ' -f1 "$WORK/.cases" >"$WORK/.names"

# Build every library first, so no case's stderr depends on whether it ran first; then run the
# cases.  Both in lanes: the libraries and the cases are independent (builds of one folder
# take turns through its lock).
build_lib() {
    (cd "$WORK" && "$NEURONOP" build $1 >/dev/null 2>&1) || echo "# cannot build $1"
}
while read -r name lib op args; do
    case $args in *--memcheck*) echo "--memcheck $lib" ;; *) echo "$lib" ;; esac
done <"$WORK/.cases" | sort -u | in_lanes build_lib

run_case() {
    set -f
    # shellcheck disable=SC2086  # the arguments are words on purpose
    set -- $1
    set +f
    name=$1 lib=$2 op=$3
    shift 3
    (cd "$WORK" && status=0 && "$NEURONOP" run "$lib" "$op" "$@" --schedule sequential \
        --timeout 1 >/dev/null 2>"$name.stderr" || status=$?; \
        { printf 'exit %s\n' "$status"; sed -e '/^==[0-9]*==WARNING: ASan doesn.t fully support/d' \
        -e 's/0x[0-9a-f]\{6,\}/0xADDR/g' "$name.stderr"; } \
        >"$name.actual")
    if [ "${NEURONOP_GOLDEN_UPDATE:-}" = 1 ]; then
        cp "$WORK/$name.actual" "$golden/$name.expected"
    fi
}
in_lanes run_case <"$WORK/.cases"
while read -r name; do
    test_expect "run diagnostic: $name" "diff -u '$golden/$name.expected' '$WORK/$name.actual'"
done <"$WORK/.names"

# A case cxx-NAME is the C++ twin of case NAME: the same op breaking the same rule through
# the torch API (tests/fixtures/cxx/).  Its message may name the C++ call instead of the C
# one, but the report must be the same: the exit status, the first error line's
# "neuronop: OP: core N: error:" (the first warning's when there is no error) and the count
# of errors and warnings, the C++ op's namespace (my_ops::) aside.  Compared on this run's
# reports, not on the golden files.
# The keys of every report at once, NAME.actual to NAME.key: one awk, not five processes a
# report.
(cd "$WORK" && awk '
    function flush() {
        if (key == "") return
        print first >key; print (e != "" ? e : w) >key; printf "%s", checks >key; close(key)
    }
    FNR == 1 { flush(); key = FILENAME; sub(/\.actual$/, ".key", key)
               first = $0; e = ""; w = ""; checks = "" }
    /^neuronop: device checks:/ { checks = checks $0 "\n" }
    { line = $0; sub(/^neuronop: [A-Za-z_][A-Za-z0-9_]*::/, "neuronop: ", line) }
    line ~ /^neuronop: / {
        i = index(line, ": error:"); if (i && e == "") e = substr(line, 1, i + 7)
        j = index(line, ": warning:"); if (j && w == "") w = substr(line, 1, j + 9)
    }
    END { flush() }' *.actual)
while read -r name; do
    case $name in cxx-*) ;; *) continue ;; esac
    test_expect "C++ twin reports as its C case: $name" "
        test -f '${name#cxx-}.actual' || { echo 'no C case ${name#cxx-} for $name'; exit 1; }
        diff -u '${name#cxx-}.key' '$name.key'"
done <"$WORK/.names"
test_expect "every C case has a C++ twin, or a reason in the cases file why not" '
    sed -n "s/^# no-twin \([^ ]*\) .*/\1/p" "$golden/cases" >no-twin
    awk "FILENAME == ARGV[1] { no_twin[\$0] = 1; next }
         /^cxx-/ { twin[substr(\$0, 5)] = 1 }
         /^cxx/ { next }
         { c[\$0] = 1 }
         END {
             for (n in c)
                 if (n in twin) {
                     if (n in no_twin) { print n \" has a twin and a no-twin line\"; bad = 1 }
                 } else if (!(n in no_twin)) {
                     print n \": no case cxx-\" n \" and no no-twin line\"; bad = 1
                 }
             exit bad
         }" no-twin .names'
test_done
