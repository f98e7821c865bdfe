#!/bin/sh
# The command line itself: version, help, unknown commands and options, exit statuses, and
# every option of every command documented in its man page.
. ./lib.sh

test_expect "--version prints the version" '
    run --version
    expect_status 0
    expect_out "neuronop 0."'

test_expect "--help lists the commands" '
    run --help
    expect_status 0
    expect_out "build"
    expect_out "inspect"'

test_expect "no command is a usage error" '
    run; expect_status 2; expect_err "usage: neuronop"'

test_expect "a misspelt command gets a suggestion and exit 2" '
    run biuld; expect_status 2
    expect_err "neuronop: error: '\''biuld'\'' is not a neuronop command; did you mean '\''build'\''?"'

test_expect "an unknown option gets a suggestion and exit 2" '
    run build --forse; expect_status 2
    expect_err "neuronop build: error: unknown option '\''--forse'\''; did you mean '\''--force'\''?"'

test_expect "a flag given a value is a usage error" '
    run build --force=yes; expect_status 2; expect_err "takes no value"'

test_expect "too many arguments is a usage error" '
    run build a b; expect_status 2; expect_err "too many arguments"'

for cmd in bench build inspect new run test; do
    test_expect "$cmd --help documents every option its man page names" '
        run '"$cmd"' --help
        expect_status 0
        expect_out "usage: neuronop '"$cmd"'"
        man="$NEURONOP_SRC/man/neuronop-'"$cmd"'.1"
        test -f "$man"
        for opt in $(grep -o -- "--[a-z][a-z-]*" "$WORK/out" | sort -u); do
            [ "$opt" = --help ] && continue
            name=$(printf "%s" "${opt#--}" | sed "s/-/\\\\\\\\-/g")
            grep -q -- "\\\\-\\\\-$name" "$man" || { echo "$man lacks $opt"; exit 1; }
        done'
done

# The other direction: an option a man page documents (an item of its OPTIONS section) must
# be one the command accepts, or the page promises what the program does not do.
for cmd in bench build inspect new run test; do
    test_expect "every option the $cmd man page documents is in its option table" '
        run '"$cmd"' --help
        man="$NEURONOP_SRC/man/neuronop-'"$cmd"'.1"
        documented=$(sed -n "/^\.SH OPTIONS/,/^\.SH [^O]/p" "$man" | grep "^\.BI* " |
            grep -o -- "\\\\-\\\\-[a-z\\\\-]*" | sed "s/\\\\//g" | sort -u)
        for opt in $documented; do
            [ "$opt" = --help ] && continue
            grep -qE -- "(^|[ ,])$opt([ =,]|\$)" "$WORK/out" ||
                { echo "$man documents $opt, which neuronop '"$cmd"' does not take"; exit 1; }
        done'
done

test_expect "--help lists each command with the brief from its own table" '
    run --help
    expect_out "  build      build an op library from its manifest"
    expect_out "  test       run a manifest'\''s test cases under every core order and count"'

test_expect "the exit status table is in neuronop(1)" '
    for s in 0 1 2 3 4; do grep -q "^\.IP $s" "$NEURONOP_SRC/man/neuronop.1"; done'

test_done
