#!/bin/sh
# neuronop test: cases from the manifest, every sub-case under every core order and count,
# failures for order and count dependence, broken rules and expected outputs, -k, the
# summary line and exit statuses.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
cp -R "$NEURONOP_SRC/tests/fixtures/checks" "$WORK/c"

# with_tests: the fixture's manifest with the tests section on stdin appended
with_tests() { cat "$NEURONOP_SRC/tests/fixtures/checks/neuronop.yaml" - >c/neuronop.yaml; }

test_expect "every sub-case runs on every core count and schedule, then a summary" '
    with_tests <<EOF
tests:
  - {name: parts, op: race_fixed, args: [[randn:10, randn:1023]], cores: [1, 3, 8]}
EOF
    run test c
    expect_status 0
    expect_out "ok    parts[randn:10] (15 executions,"
    expect_out "ok    parts[randn:1023] (15 executions,"
    test "$(tail -1 "$WORK/out")" = "2 passed, 0 failed"'

test_expect "--schedules sets the number of shuffled schedules" '
    run test c --schedules 0
    expect_status 0
    expect_out "parts[randn:10] (9 executions,"'

test_expect "a result that depends on core order fails, naming the two executions" '
    with_tests <<EOF
tests:
  - {name: order, op: last_writer, args: [randn:16], cores: [4]}
EOF
    run test c --no-check race
    expect_status 1
    expect_out "FAIL  order: the result depends on core order: sequential on 4 cores and reversed on 4 cores differ in 16 elements"
    expect_out "0 passed, 1 failed"'

# gpsimd.md: eight cores.  The manifest takes counts up to 64, not knowing the device; a case
# on nine ran a device that does not exist, and could pass.
test_expect "a case on more cores than the device has is refused before any case runs" '
    with_tests <<EOF
tests:
  - {name: fine, op: by_count, args: [randn:16], cores: [8]}
  - {name: nine, op: by_count, args: [randn:16], cores: [2, 9]}
EOF
    run test c
    expect_status 2
    expect_err "c/neuronop.yaml:18:61: error: test '\''nine'\'' runs on 9 cores, but device '\''trn1'\'' has 8"
    expect_err "list core counts from 1 to 8 in its '\''cores'\'', or choose a device with more (--device)"
    test ! -s out
    if grep "built" err; then exit 1; fi   # said before the build, not after it'

# Before: a built library where the manifest goes was "invalid YAML: control characters".
test_expect "a built library given for the manifest is named as one" '
    run test c/build/libchecks.so
    expect_status 2
    expect_err "neuronop: error: '\''c/build/libchecks.so'\'' is a built library (a shared object), not a manifest"
    expect_err "give the library'\''s folder or its neuronop.yaml"'

test_expect "a result that depends on the core count fails" '
    with_tests <<EOF
tests:
  - {name: count, op: by_count, args: [randn:16], cores: [1, 2]}
EOF
    run test c
    expect_status 1
    expect_out "FAIL  count: the result depends on core count: sequential on 1 core and sequential on 2 cores"'

test_expect "a broken device rule fails the case with the rule'\''s message" '
    with_tests <<EOF
tests:
  - {name: racy, op: race, args: [randn:100]}
EOF
    run test c
    expect_status 1
    expect_err "neuronop: race: error: output element 12 was written by core 0 and by core 1 (racecheck)"
    expect_out "FAIL  racy: a device rule was broken under sequential"
    expect_out "      race: output element 12 was written by core 0 and by core 1 (racecheck)"'

test_expect "the expected output is compared with tolerances, worst elements shown" '
    npy write c/x.npy "<f4" 8 -1 2 -3 4 -5 6 -7 8
    npy write c/good.npy "<f4" 8 0 2 0 4 0 6 0 8
    npy write c/bad.npy "<f4" 8 0 2 0 4 0 6 0 9
    npy write c/x2.npy "<f4" 2x4 -1 2 -3 4 -5 6 -7 8
    npy write c/bad2.npy "<f4" 2x4 0 2 0 4 0 6 0 9
    with_tests <<EOF
tests:
  - {name: good, op: race_fixed, args: [x.npy], expect: good.npy, cores: [1, 8]}
  - {name: bad, op: race_fixed, args: [x.npy], expect: bad.npy}
  - {name: loose, op: race_fixed, args: [x.npy], expect: bad.npy, atol: 1.5}
  - {name: bad2d, op: race_fixed, args: [x2.npy], expect: bad2.npy}
EOF
    run test c
    expect_status 1
    expect_out "ok    good"
    expect_out "FAIL  bad: the output differs from '\''c/bad.npy'\'' beyond rtol=1.3e-06 atol=1e-05 in 1 element ("
    expect_out "        at [7]: got 8, expected 9"
    expect_out "        at [1, 3]: got 8, expected 9"
    expect_out "ok    loose"
    expect_out "2 passed, 2 failed"'

# Before: "differs ... beyond rtol=... in 1 element; dtype ..." when every value matched.
test_expect "an expected file of another dtype or shape says so, not that elements differ" '
    npy write c/x.npy "<f4" 4 1 2 3 4
    npy write c/half.npy "<f2" 4 1 2 3 4
    npy write c/wide.npy "<f4" 2x2 1 2 3 4
    with_tests <<EOF
tests:
  - {name: half, op: race_fixed, args: [x.npy], expect: half.npy}
  - {name: wide, op: race_fixed, args: [x.npy], expect: wide.npy}
EOF
    run test c
    expect_status 1
    expect_out "FAIL  half: the output differs from '\''c/half.npy'\'': dtype float32 differs from the expected float16 ("
    expect_out "FAIL  wide: the output differs from '\''c/wide.npy'\'': shape 4 differs from the expected 2x2 ("'

test_expect "a missing expected file is an error of its case, not of the build" '
    with_tests <<EOF
tests:
  - {name: lost, op: race_fixed, args: [randn:8], expect: nowhere.npy}
EOF
    run test c
    expect_status 1
    expect_err "cannot read .npy file '\''c/nowhere.npy'\''"
    expect_out "ERROR lost: its expected output: cannot read .npy file '\''c/nowhere.npy'\'': No such file or directory ("
    run build c
    expect_status 0'

test_expect "a reference function is the answer the kernel is held to" '
    with_tests <<EOF
reference_srcs: [ref.c]
tests:
  - {name: good, op: race_fixed, args: [[randn:10, randn:1023]], reference: relu_ref, cores: [1, 8]}
  - {name: wrong, op: race_fixed, args: [randn:10], reference: twice_ref}
EOF
    run test c --schedules 0
    expect_status 1
    expect_out "ok    good[randn:10]"
    expect_out "ok    good[randn:1023]"
    expect_out "FAIL  wrong: the output differs from reference '\''twice_ref'\'' beyond rtol=1.3e-06 atol=1e-05 in 3 elements ("
    expect_out "2 passed, 1 failed"
    run inspect c
    jq -e ".references == [{\"name\": \"relu_ref\", \"op\": \"race_fixed\"}, {\"name\": \"twice_ref\", \"op\": \"race_fixed\"}]" "$WORK/out"'

test_expect "a reference function that is not defined is a build error" '
    with_tests <<EOF
reference_srcs: [ref.c]
tests:
  - {name: t, op: race_fixed, args: [randn:4], reference: nowhere_ref}
EOF
    run test c
    expect_status 3
    line=$(grep -n nowhere_ref c/neuronop.yaml | cut -d: -f1)
    expect_err "c/neuronop.yaml:$line:59: error: reference function '\''nowhere_ref'\'' of test '\''t'\'' is not defined in reference_srcs"
    expect_err "    nt_tensor *nowhere_ref(const nt_tensor *)"'

test_expect "a reference function with the wrong signature fails at its definition" '
    echo "nt_tensor *bad_ref(const nt_tensor *t, double x) { return 0; }" >>c/ref.c
    with_tests <<EOF
reference_srcs: [ref.c]
tests:
  - {name: t, op: race_fixed, args: [randn:4], reference: bad_ref}
EOF
    run test c
    expect_status 3
    expect_err "incompatible types for redefinition of '\''bad_ref'\''"
    expect_err "so its reference function must be:"'

test_expect "-k selects cases; the others are counted as skipped" '
    with_tests <<EOF
tests:
  - {name: good, op: race_fixed, args: [randn:8]}
  - {name: also_good, op: race_fixed, args: [randn:9]}
  - {name: other, op: race_fixed, args: [randn:10]}
EOF
    run test c -k goo
    expect_status 0
    expect_out "2 passed, 0 failed, 1 skipped"'

# Before, -k matching no case skipped them all and exited 0: a typo in CI stayed green.
test_expect "-k that matches no case is a usage error naming the cases, and runs none" '
    with_tests <<EOF
tests:
  - {name: good, op: race_fixed, args: [randn:8]}
  - {name: also_good, op: race_fixed, args: [randn:9]}
EOF
    run test c -k gdoo
    expect_status 2
    expect_err "neuronop test: error: -k '\''gdoo'\'' matches no test case of '\''c/neuronop.yaml'\'' (nor a sub-case'\''s name[v1, v2]); give part of a case'\''s name: good, also_good"
    test ! -s out
    run test c -k 8]   # a case of one value each has no sub-case'\''s name[v]
    expect_status 2
    # a sub-case'\''s name, as the reports give it, picks that sub-case to run again
    with_tests <<EOF
tests:
  - {name: shapes, op: race_fixed, args: [[randn:8, randn:9]]}
EOF
    run test c -k "shapes[randn:9]"
    expect_status 0
    expect_out "ok    shapes[randn:9]"
    expect_out "1 passed, 0 failed, 1 skipped"
    { echo tests:; for i in 1 2 3 4 5 6 7 8 9 10; do
        echo "  - {name: c$i, op: race_fixed, args: [randn:8]}"; done; } | with_tests
    run test c -k gdoo
    expect_status 2
    expect_err "give part of a case'\''s name: c1, c2, c3, c4, c5, c6, c7, c8 and 2 more (under its '\''tests'\'')"
    : | with_tests
    run test c -k gdoo
    expect_status 2
    expect_err "neuronop test: error: -k '\''gdoo'\'' matches no test case: '\''c/neuronop.yaml'\'' has none; add a '\''tests'\'' section (see neuronop.yaml(5))"'

test_expect "arguments that cannot be made are an error of the case" '
    with_tests <<EOF
tests:
  - {name: broken, op: race_fixed, args: [missing.npy]}
EOF
    run test c --junit report.xml
    expect_status 1
    expect_err "cannot read"
    expect_out "ERROR broken: its arguments cannot be made: cannot read .npy file '\''c/missing.npy'\'': No such file or directory ("
    grep -q "message=\"its arguments cannot be made: cannot read .npy file &apos;c/missing.npy&apos;" report.xml'

# Before, such a file failed in the worker with "Permission denied" where the kernel has
# Landlock and was read where it has not.
test_expect "an argument file outside the library folder is refused at its line, on any kernel" '
    mkdir -p shared
    cp "$NEURONOP_SRC/tests/fixtures/copy/neuronop.yaml" shared/x.npy
    with_tests <<EOF
tests:
  - {name: outside, op: race_fixed, args: [../shared/x.npy]}
EOF
    run test c
    expect_status 2
    expect_err "c/neuronop.yaml:"
    expect_err "error: argument file '\''../shared/x.npy'\'' of test '\''outside'\'' is outside the library folder (it resolves to '\''$WORK/shared/x.npy'\'')"
    expect_err "copy the file there"
    # (a red team'\''s find: a name without .npy was no path to check, and was read from the
    # working folder)
    cp shared/x.npy shared/data
    with_tests <<EOF
tests:
  - {name: outside, op: race_fixed, args: [$WORK/shared/data]}
EOF
    run test c
    expect_status 2
    expect_err "error: argument file '\''$WORK/shared/data'\'' of test '\''outside'\'' is outside the library folder"'

# A C++ library's ops are not known when its manifest is read: a tensor argument spelt as a
# number is a file in the library folder, as every argument file is (a red team's find: it
# was read from the working folder, and without Landlock a planted file there passed)
test_expect "a C++ tensor argument named like a number is a file of the library folder" '
    copy_example add_cxx ax
    rm -rf ax/build
    npy write ax/inf "<f4" 5 0 1 2 3 4
    cat >>ax/neuronop.yaml <<EOF
  - {name: number_named, op: add, args: [inf, full:5:0.5], expect: tests/sum.npy}
EOF
    mkdir -p elsewhere
    npy write elsewhere/inf "<f4" 5 0 0 0 0 0
    (cd elsewhere && NEURONOP_LANDLOCK=off "$NEURONOP" test ../ax -k number_named) >out 2>err ||
        { cat out err; exit 1; }
    grep -q "^ok    number_named" out'

test_expect "a manifest without tests says so and passes" '
    cp "$NEURONOP_SRC/tests/fixtures/checks/neuronop.yaml" c/neuronop.yaml
    run test c
    expect_status 0
    expect_err "declares no tests"
    expect_out "0 passed, 0 failed"'

test_expect "a bad --schedules value is a usage error" '
    run test c --schedules 99
    expect_status 2
    expect_err "--schedules takes a whole number from 0 to 37"'

test_expect "a compile error stops the run with status 3" '
    echo broken >>c/k.c
    run test c
    expect_status 3'

test_expect "the public multicore sample fails its test on 10 elements: core 7 out of range" '
    cp -R "$NEURONOP_SRC/tests/fixtures/rules_mc" s
    cat "$NEURONOP_SRC/tests/fixtures/rules_mc/neuronop.yaml" - >s/neuronop.yaml <<EOF
tests:
  - {name: sample, op: sample_relu, args: [[randn:16, randn:10]], cores: [8]}
EOF
    run test s
    expect_status 1
    expect_out "ok    sample[randn:16]"
    expect_out "FAIL  sample[randn:10]: a device rule was broken under sequential on 8 cores"
    expect_out "      sample_relu: core 7: nt_tensor_to_tcm(offset=21, n=3): elements 21..23 are outside the tensor, which has 10"
    expect_err "neuronop: sample_relu: core 7: error: nt_tensor_to_tcm(offset=21, n=3)"'

test_expect "a crash and a timeout fail their cases; the others still run" '
    cp -R "$NEURONOP_SRC/tests/fixtures/rules" r
    cat "$NEURONOP_SRC/tests/fixtures/rules/crash.yaml" - >r/neuronop.yaml <<EOF
tests:
  - {name: crashes, op: segv, args: [zeros:4]}
  - {name: hangs, op: spin, args: [zeros:4]}
  - {name: fine, op: full_stack_printf, args: [zeros:4]}
EOF
    run test r --timeout 0.3 --schedules 0
    expect_status 1
    expect_out "FAIL  crashes: a device rule was broken under sequential"
    expect_out "      segv: core 0: kernel crashed: segmentation fault in kernel code"
    expect_out "FAIL  hangs: a device rule was broken under sequential"
    expect_out "      spin: core 0: timeout: the kernel ran for more than 0.3 s and was stopped"
    expect_out "ok    fine"
    expect_out "1 passed, 2 failed"'

# A reference runs on a core of its own, as a kernel does: its crash, timeout or forbidden
# call is said to be the reference function's, not a kernel's (the kernel of these cases is
# fine), and the case is an ERROR (the test's own code failed), also when the call ended the
# reference's worker.
test_expect "a reference that crashes, never ends or makes a forbidden call is an ERROR named as the reference" '
    cp -R "$NEURONOP_SRC/tests/fixtures/rules" rf
    cat >rf/ref.c <<EOF
#include <neuronop.h>
nt_tensor *crashing_ref(const nt_tensor *t) { volatile int *p = (int *)16; *p = 1; return NULL; }
nt_tensor *endless_ref(const nt_tensor *t) { for (;;) ; }
int unlink(const char *);
nt_tensor *calling_ref(const nt_tensor *t) { unlink("/nonexistent/neuronop-test"); return NULL; }
void pthread_exit(void *);
nt_tensor *ending_ref(const nt_tensor *t) { pthread_exit(NULL); }
#include <sys/syscall.h>
#include <unistd.h>
nt_tensor *exiting_ref(const nt_tensor *t) { syscall(SYS_exit, 0); return NULL; }
EOF
    { sed "s/^compute_srcs/reference_srcs: [ref.c]\ncompute_srcs/" rf/crash.yaml; cat <<EOF
tests:
  - {name: crashes, op: full_stack_printf, args: [zeros:4], reference: crashing_ref}
  - {name: hangs, op: full_stack_printf, args: [zeros:4], reference: endless_ref}
  - {name: calls, op: full_stack_printf, args: [zeros:4], reference: calling_ref}
  - {name: ends, op: full_stack_printf, args: [zeros:4], reference: ending_ref}
  - {name: exits, op: full_stack_printf, args: [zeros:4], reference: exiting_ref}
EOF
    } >rf/neuronop.yaml
    run test rf --timeout 0.3 --schedules 0
    expect_status 1
    # (a reference that ended its own thread waited out a time limit of 8 cores, unreported)
    expect_out "ERROR ends: its reference function '\''ending_ref'\'' failed: reference function made a system call the device does not have: exit"
    expect_out "ERROR exits: its reference function '\''exiting_ref'\'' failed: reference function made a system call the device does not have: exit"
    expect_out "ERROR crashes: its reference function '\''crashing_ref'\'' failed: reference function crashed: segmentation fault in its own code, address 0x10"
    expect_out "ERROR hangs: its reference function '\''endless_ref'\'' failed: timeout: the reference function ran for more than 0.3 s and was stopped"
    expect_out "ERROR calls: its reference function '\''calling_ref'\'' failed: reference function made a system call the device does not have: unlink"'

# The parent's own deadline for a reference is its one core's time limit and the grace: it
# was the request's eight cores' (10 s under --timeout 1), for a reference whose watchdog
# cannot stop it (it blocked the watchdog's signal).
test_expect "a reference the watchdog cannot stop is stopped at one core'\''s time limit, not eight" '
    cp -R "$NEURONOP_SRC/tests/fixtures/rules" rb
    cat >rb/ref.c <<EOF
#include <neuronop.h>
#include <signal.h>
nt_tensor *deaf_ref(const nt_tensor *t)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, 0);
    for (;;) ;
}
EOF
    { sed "s/^compute_srcs/reference_srcs: [ref.c]\ncompute_srcs/" rb/crash.yaml; cat <<EOF
tests:
  - {name: deaf, op: full_stack_printf, args: [zeros:4], reference: deaf_ref}
EOF
    } >rb/neuronop.yaml
    run test rb --timeout 1 --schedules 0
    expect_status 1
    expect_out "ERROR deaf: its reference function '\''deaf_ref'\'' failed: timeout"
    ms=$(sed -n "s/^ERROR deaf: .*(\([0-9]*\)\.[0-9] ms)\$/\1/p" out)
    test -n "$ms" && test "$ms" -lt 6000'

test_expect "--seed, -j and --device are taken, -v shows the build, an unknown device is refused" '
    cp "$NEURONOP_SRC/tests/fixtures/checks/k.c" c/k.c   # an earlier test broke it
    with_tests <<EOF
tests:
  - {name: seeded, op: race_fixed, args: [randn:64]}
EOF
    run test c --seed 7 -j 1 --device trn1 -v --json
    expect_status 0
    expect_err "note: compile (device)"
    jq -e ".passed == 1" "$WORK/out"
    run test c --device trn9
    expect_status 2
    expect_err "no device profile '\''trn9'\''"'

# Every shipped example passing its own tests is t0290 (built in place, one TAP test each);
# t0010 builds each from a fresh copy.

test_expect "a reference that breaks a memory rule is blamed by name, not the kernel" '
    copy_example relu_multicore "$WORK/sref"
    cat >>sref/ref.c <<EOF
nt_tensor *stack_ref(const nt_tensor *t)
{
    float buf[4];
    nt_tcm_accessor a = nt_tcm_accessor_of(t);
    nt_tensor_to_tcm(&a, buf, 0, 4);
    return nt_zeros(nt_dim(t), nt_sizes(t), NT_F32);
}
EOF
    cat >>sref/neuronop.yaml <<EOF
  - name: bad_reference
    op: relu_forward
    args: [randn:8]
    reference: stack_ref
EOF
    run test sref -k bad_reference
    expect_status 1
    expect_err "neuronop: relu_forward: reference function '\''stack_ref'\'': error: nt_tensor_to_tcm"
    if grep -q "relu_forward: core 0: error" "$WORK/err"; then exit 1; fi
    expect_out "ERROR bad_reference: its reference function '\''stack_ref'\'' failed"'

test_done
