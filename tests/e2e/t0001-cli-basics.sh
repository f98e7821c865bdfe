#!/bin/sh
# The command line itself: version, help, unknown commands and options, exit statuses, and
# every option of every command documented in its man page, and every option a page names real.
. ./lib.sh

test_expect "--version prints the version" '
    run --version
    expect_status 0
    expect_out "neuronop 0."'

# the test scripts themselves: one that is killed (a harness's timeout) leaves no folder
test_expect "a test script ended by a signal removes its scratch folder" '
    printf "%s\n" ". ./lib.sh" "echo \"\$WORK\" >\"\$1\"" "sleep 30 & wait" >"$WORK/killed.sh"
    cp "$NEURONOP_SRC/tests/e2e/lib.sh" "$WORK/"
    (cd "$WORK" && exec sh killed.sh "$WORK/where") &
    pid=$!
    while [ ! -s "$WORK/where" ]; do sleep 0.05; done
    kill -TERM $pid
    status=0
    wait $pid || status=$?
    [ "$status" = 143 ]
    scratch=$(cat "$WORK/where")
    case $scratch in "$WORK"|"") exit 1 ;; esac
    [ ! -e "$scratch" ]'

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
    expect_err "neuronop build: error: unknown option '\''--forse'\''; did you mean '\''--force'\''?"
    run --versio
    expect_status 2
    expect_err "neuronop: error: unknown option '\''--versio'\''; did you mean '\''--version'\''?"'

test_expect "a flag given a value is a usage error" '
    run build --force=yes; expect_status 2; expect_err "takes no value"'

test_expect "too many arguments is a usage error that names the first extra one" '
    run build a b; expect_status 2; expect_err "neuronop build: error: too many arguments: '\''b'\''"
    expect_err "see '\''neuronop build --help'\''"'

# (a docs audit'\''s find: "missing arguments", for one, and no word of --help)
test_expect "too few arguments say how many are missing, and where to read" '
    run inspect; expect_status 2
    expect_err "neuronop inspect: error: missing an argument"
    expect_err "usage: neuronop inspect"
    expect_err "see '\''neuronop inspect --help'\''"'

test_expect "test given an op after the library points to -k" '
    copy_example relu rl
    run test rl relu_forward; expect_status 2
    expect_err "neuronop test: error: too many arguments: '\''relu_forward'\'' (test takes one library; to run only the cases whose name contains a word, give -k WORD)"
    expect_err "usage: neuronop test"'

for cmd in run bench; do
    test_expect "$cmd with the op before the library says which comes first" '
        copy_example relu rl
        run '"$cmd"' relu_forward rl randn:4x4; expect_status 2
        expect_err "neuronop: error: cannot find '\''relu_forward'\''; did you mean '\''neuronop '"$cmd"' rl relu_forward ...'\''? (the library comes first, then the op)"
        test ! -e rl/build'
done

test_expect "a missing library with no library after it is only missing" '
    run run nothere relu_forward; expect_status 2
    expect_err "neuronop: error: cannot find '\''nothere'\'': No such file or directory"
    if grep -q "did you mean" err; then exit 1; fi'

# what follows a missing library may be a file without being one: an op named like a folder
# of the current one, a tensor file given where the op goes, an empty first argument
test_expect "a missing library before a file that is no library is only missing" '
    mkdir relu_forward
    : >x.npy
    for second in relu_forward x.npy; do
        run run nothere "$second"; expect_status 2
        expect_err "neuronop: error: cannot find '\''nothere'\'': No such file or directory"
        if grep -q "did you mean" err; then exit 1; fi
    done
    copy_example relu rl
    run run "" rl; expect_status 2
    if grep -q "did you mean" err; then exit 1; fi'

for cmd in bench build inspect new python run test; do
    test_expect "$cmd --help documents every option its man page names" '
        run '"$cmd"' --help
        expect_status 0
        expect_out "usage: neuronop '"$cmd"'"
        man="$NEURONOP_SRC/man/neuronop-'"$cmd"'.1"
        test -f "$man"
        # each option as the page writes it (\-\-name\-part), looked for in the page: one awk
        grep -o -- "--[a-z][a-z-]*" "$WORK/out" | sort -u | grep -vx -- --help |
            sed "s/-/\\\\-/g" | awk -v man="$man" "
                BEGIN { while ((getline line < man) > 0) text = text line \"\\n\" }
                !index(text, \$0) { print man \" lacks \" \$0; bad = 1 }
                END { exit bad }"'
done

# The other direction: every option a man page mentions, anywhere on it, must be one the
# command takes, or the page promises what the program does not do.  "neuronop CMD --opt"
# on any page is held to CMD's table; any other option on neuronop-CMD.1 to CMD's.
commands="bench build inspect new python run test"
# Long options only: neuronop-build(1) shows the compilers' own short flags (-g, -fPIC,
# -std=c++14, ...), which no rule could tell from ours; and these long ones of the linker's.
not_options="--no-undefined --param"
# plain PAGE: the page's text with fonts dropped and \- as -
plain() { sed 's/\\f[BIRP]//g; s/\\-/-/g' "$1"; }
# takes CMD OPT: neuronop CMD --help lists OPT
takes() {
    # each command's --help once (in $WORK, which the tests share), not once an option
    [ -f "$WORK/help-$1" ] || "$NEURONOP" "$1" --help >"$WORK/help-$1"
    grep -qE -- "(^|[ ,])$2([ =,]|\$)" "$WORK/help-$1" ||
        { echo "$3 mentions $2, which neuronop $1 does not take"; return 1; }
}
cmd_re="neuronop ($(echo $commands | tr " " "|")) --?[a-zA-Z][a-z-]*"
for page in "$NEURONOP_SRC"/man/*.[135]; do
    test_expect "every option $(basename "$page") mentions is in its command's table" '
        plain "$page" | grep -oE "$cmd_re" | sort -u | while read -r _ cmd opt; do
            takes "$cmd" "$opt" "$page"
        done
        case $(basename "$page") in neuronop-*.1) ;; *) exit 0 ;; esac
        cmd=$(basename "$page" .1); cmd=${cmd#neuronop-}
        plain "$page" | sed -E "s/$cmd_re//g" | grep -oE -- "(^|[^a-zA-Z0-9-])--[a-zA-Z][a-z-]*" |
            sed "s/^[^-]*//" | sort -u | while read -r opt; do
            case " $not_options --help " in *" $opt "*) continue ;; esac
            takes "$cmd" "$opt" "$page"
        done'
done

test_expect "--help lists each command with the brief from its own table" '
    run --help
    expect_out "  build      build an op library from its manifest"
    expect_out "  test       run a manifest'\''s test cases under every core order and count"
    expect_out "'\''neuronop COMMAND --help'\'' (or '\''neuronop help COMMAND'\'') describes a command"'

test_expect "help COMMAND is COMMAND --help; help of no command is a usage error" '
    run help run
    expect_status 0
    expect_out "usage: neuronop run [options]"
    run help bogus
    expect_status 2
    expect_err "neuronop: error: '\''bogus'\'' is not a neuronop command"
    run help __serve
    expect_status 2
    expect_err "neuronop: error: '\''__serve'\'' is not a neuronop command"
    expect_err "see '\''neuronop --help'\''"'

# Before, output lost on a full disk exited 0: bench --json >base.json left half a baseline.
test_expect "standard output that cannot be written is an error, exit 2" '
    copy_example relu_tcm rt
    # (run and bench flush their results early: the reason was lost, "Input/output error")
    for args in --version "inspect rt" "help build" "run rt relu_forward randn:4x4" \
            "bench rt relu_forward randn:4x4 --iters 2"; do
        status=0
        "$NEURONOP" $args >/dev/full 2>err || status=$?
        [ "$status" = 2 ] || { echo "$args: exit $status"; exit 1; }
        grep -qx "neuronop: error: cannot write standard output: No space left on device" err
    done'

# (a new user's finds: a source file got "not a neuronop op library / build one", the build
# folder "no neuronop.yaml", and the library's name given in its own folder "cannot find")
test_expect "a source file, a build folder, or a library's name in its own folder say what to give" '
    copy_example relu mine
    "$NEURONOP" build mine >/dev/null 2>&1
    run run mine/relu.c relu_forward randn:4
    expect_status 2
    expect_err "neuronop: error: '\''mine/relu.c'\'' is a source file, not a library"
    expect_err "give its library'\''s folder ('\''mine'\'') or manifest"
    mkdir mine/src
    cp mine/relu.c mine/src/
    run run mine/src/relu.c relu_forward randn:4
    expect_err "give its library'\''s folder ('\''mine'\'') or manifest"
    (cd mine && "$NEURONOP" run src/relu.c relu_forward randn:4) >out 2>err && exit 1
    expect_err "give its library'\''s folder ('\''.'\'') or manifest"
    run inspect mine/build/
    expect_status 2
    expect_err "neuronop: error: no neuronop.yaml in '\''mine/build'\'', which holds the built library '\''librelu.so'\''"
    expect_err "give the library ('\''mine/build/librelu.so'\''), or its source folder"
    (cd mine && "$NEURONOP" build mine) >out 2>err && exit 1
    expect_err "neuronop: error: cannot find '\''mine'\'': No such file or directory"
    expect_err "you are in '\''mine'\'' already: give '\''.'\''"
    (cd mine && "$NEURONOP" run relu_forward randn:4) >out 2>err && exit 1
    expect_err "neuronop: error: cannot find '\''relu_forward'\'': No such file or directory"
    expect_err "an op'\''s name? give the library first, '\''.'\'' for this folder'\''s: . relu_forward ..."'

test_expect "the exit status table is in neuronop(1)" '
    for s in 0 1 2 3 4; do grep -q "^\.IP $s" "$NEURONOP_SRC/man/neuronop.1"; done'

test_done
