#!/bin/sh
# The whole kernel API works: every unary tensor-library op in both forms against Perl, and
# every dtype through the standard and streaming accessors, values unchanged.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
values() { npy read "$1" | tail -n +2 | tr '\n' ' ' | sed 's/ $//'; }
cp -R "$NEURONOP_SRC/tests/fixtures/apicov" "$WORK/a"

test_expect "abs ceil floor sin cos tan log log2 log10 exp, allocating and _out forms" '
    npy write x.npy "<f4" 3 -1.25 0.5 2
    run run a unary_all x.npy -o out.npy
    expect_status 0
    perl -e "use POSIX; my @x = (-1.25, 0.5, 2); my @f = (
        sub { abs \$_[0] }, sub { ceil \$_[0] }, sub { floor \$_[0] }, sub { sin \$_[0] },
        sub { cos \$_[0] }, sub { POSIX::tan \$_[0] }, sub { log abs \$_[0] },
        sub { log(abs \$_[0]) / log 2 }, sub { log(abs \$_[0]) / log 10 }, sub { exp \$_[0] });
        print join(\" \", map { my \$g = \$_; map { 0 + sprintf(\"%.6g\", unpack(\"f\", pack(\"f\", \$g->(\$_)))) } @x } @f), \"\n\"" >want
    test -s want
    test "$(values out.npy)" = "$(cat want)"'

for d in "<f4" "<V2" "<f2" "<i4" "|i1" "<i8" "<i2" "|u1"; do
    for op in std_copy stream_copy; do
        test_expect "$op keeps every $d value" '
            npy write in.npy "'"$d"'" 5 0 1 2 3 100
            run run a '"$op"' in.npy -o out.npy
            expect_status 0
            test "$(values out.npy)" = "0 1 2 3 100"'
    done
done

test_done
