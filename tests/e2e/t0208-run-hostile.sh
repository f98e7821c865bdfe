#!/bin/sh
# Kernels and shape functions that attack neuronop itself run in the device's worker process:
# each is reported as a failure with exit status 1, neuronop survives, no file is written and
# no process is left behind (run_alone looks for any live process of the session it started
# neuronop in; the output pipe closes too).
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/hostile" "$WORK/h"
"$NEURONOP" build "$WORK/h" >/dev/null 2>&1

# attacked OP MESSAGE [SECONDS]: neuronop run --timeout SECONDS (default 1) fails with exit 1
# and MESSAGE, within 30 s, leaving no process holding its output and no process at all
attacked() {
    status=0
    timeout 30 sh -c '"$1" run h "$2" zeros:4 --timeout "$4" 2>"$3/err" | cat >"$3/out"; \
        exit $(($? == 0 ? 0 : 99))' _ "$NEURONOP" "$1" "$WORK" "${3:-1}" || status=$?
    test "$status" != 124 || { echo "timed out: something held the output open"; return 1; }
    run_alone run h "$1" zeros:4 --timeout "${3:-1}"
    expect_status 1
    expect_err "$2"
}

# Under AddressSanitizer the worker's sanitizer catches some attacks first (the wild memset,
# the exit-time leak check) and ends the worker its own way: still a reported failure.
if [ -n "${NEURONOP_SANITIZED:-}" ]; then died="core 0: error: "; else died="error: the device process died:"; fi

test_expect "a kernel that writes over the runtime's memory is a reported failure" '
    attacked wild_memset "neuronop: wild_memset: $died"'

test_expect "a kernel that writes wildly through a long pointer is a reported failure" '
    attacked wild_loop "neuronop: wild_loop: "'

test_expect "a kernel that exits with status 0 is a failure, not a pass" '
    attacked exits "neuronop: exits: core 0: error: user code ended the device process (exit status 0) before the op finished"
    [ -n "${NEURONOP_SANITIZED:-}" ] || expect_err "  kernels, shape functions and references must return, not exit"'

# (the lines under a message the parent words itself are indented as a device diagnostic'\''s
# are: a docs audit found them at the margin)
test_expect "a kernel that forks is stopped by seccomp, and no child survives" '
    attacked forks "neuronop: forks: core 0: error: kernel made a system call the device does not have: fork"
    expect_err "  device code has no processes, files, network or signals"'

test_expect "a kernel that creates a file is stopped, and no file appears" '
    attacked creates "neuronop: creates: core 0: error: kernel made a system call the device does not have: creat"
    test ! -e pwned-by-kernel
    test ! -e h/pwned-by-kernel'

if [ -n "${NEURONOP_SANITIZED:-}" ]; then ended="error: "; else ended="error: user code ended the device process (exit status 0)"; fi
test_expect "a shape function that exits is a failure naming the shape function" '
    attacked shape_exits "neuronop: shape_exits: shape function '\''shape_exits'\'': $ended"'

# (A spinning function is stopped at its limit plus the phase's 2 s of grace whatever the
# limit: a short one spares the test a second of spinning.)
# at its time limit, as a kernel is: not 2 s later (the grace the cores and the loading have).
# Measured against a run of the same library that ends at once, so that what a loaded machine
# (a sanitized build beside two other scripts) adds to every run is not counted: a fixed bound
# of 1 s over the limit failed in CI at 1527 ms.
test_expect "a shape function that never returns is stopped at its time limit" '
    attacked shape_spins "neuronop: shape_spins: shape function '\''shape_spins'\'': error: timeout:" 0.2
    start=$(date +%s%N)
    run run h shape_exits zeros:4 --timeout 0.5
    base=$((($(date +%s%N) - start) / 1000000))
    start=$(date +%s%N)
    run run h shape_spins zeros:4 --timeout 0.5
    expect_status 1
    took=$((($(date +%s%N) - start) / 1000000 - base))
    test "$took" -lt 1700 ||
        { echo "stopped $took ms later than a run that ends at once, for --timeout 0.5"; exit 1; }'

# Under the sanitizers the shared page it finds may be one of theirs, and the worker may end
# another way: still a reported failure.
if [ -n "${NEURONOP_SANITIZED:-}" ]; then forged="error: "; else forged="error: the device process sent a malformed report"; fi
test_expect "a shape function that rewrites the phase page to postpone its deadline is stopped" '
    attacked shape_forges "neuronop: shape_forges: shape function '\''shape_forges'\'': $forged"'

# a new user's find: a raw exit system call ended only the core's thread, and the run then
# waited out every core's time limit (8 x 5 s + 2 here) before it said "timeout"
mkdir -p "$WORK/te"
cat >"$WORK/te/k.c" <<'EOF'
#include <neuronop.h>
nt_tensor *ends(const nt_tensor *t)
{
    __asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "rax", "rdi", "rcx",
                     "r11", "memory");
    return nt_zeros(nt_dim(t), nt_sizes(t), NT_F32);
}
EOF
cat >"$WORK/te/s.c" <<'EOF'
#include <neuronop.h>
nt_tensor *same(const nt_tensor *t)
{
    return nt_empty(nt_dim(t), nt_sizes(t), NT_F32);
}
nt_tensor *shape_ends(const nt_tensor *t)
{
    __asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "rax", "rdi", "rcx",
                     "r11", "memory");
    return nt_empty(nt_dim(t), nt_sizes(t), NT_F32);
}
EOF
printf '%s\n' 'name: te' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'ops:' \
    '  ends: {args: [tensor], shape: same, kernel: ends}' \
    '  shape_ends: {args: [tensor], shape: shape_ends, kernel: ends}' >"$WORK/te/neuronop.yaml"
"$NEURONOP" build "$WORK/te" >/dev/null 2>&1

test_expect "a kernel or shape function that ends its own thread is stopped at once" '
    status=0
    timeout 10 "$NEURONOP" run te ends zeros:4 --timeout 5 >out 2>err || status=$?
    expect_status 1
    expect_err "neuronop: ends: core 0: error: kernel made a system call the device does not have: exit"
    status=0
    timeout 10 "$NEURONOP" run te shape_ends zeros:4 --timeout 5 >out 2>err || status=$?
    expect_status 1
    expect_err "shape function made a system call the device does not have: exit"'

test_expect "neuronop test goes on after a dead worker, and fails" '
    run_alone test h
    expect_status 1
    expect_out "FAIL  dies_first"
    expect_out "FAIL  exits_second"
    expect_out "0 passed, 3 failed"'

test_expect "NEURONOP_SANDBOX=off runs user code in neuronop itself (for a debugger)" '
    NEURONOP_SANDBOX=off "$NEURONOP" run h exits zeros:4 >out 2>err && status=0 || status=$?
    test "$status" = 0'

test_expect "inspect reads a library without running its code" '
    cat >ctor.c <<EOF
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void ran(void) { close(creat("ctor-ran", 0644)); }
const unsigned neuronop_library[64] = { 0x4e4f5031u, 1 };
EOF
    cc -shared -fPIC -o ctor.so ctor.c
    run inspect ctor.so
    expect_status 2
    expect_err "neuronop: error: '\''ctor.so'\'' was built for library format 1"
    test ! -e ctor-ran
    run run ctor.so anything zeros:4
    expect_status 2
    test ! -e ctor-ran
    run inspect h/build/libhostile.so
    expect_status 0
    expect_out "\"library\": \"hostile\""'

# A library neuronop builds has no code that runs when it loads (a constructor would run in
# every worker, the reference's included: neuronop-build(1)); loading is still a phase of its
# own, bounded and named, for a library made otherwise (test_sandbox: a load that never ends,
# a call trapped while loading).
# (after the template's <assert.h>, and before it: under libtcc glibc's sys/cdefs.h once
# defined __attribute__ away after a glibc header, and the constructor was none)
test_expect "a library constructor is refused at build" '
    "$NEURONOP" new hangs >/dev/null
    cp hangs/shape.c shape.orig
    { printf "%s\n" "__attribute__((constructor)) static void never(void) { for (;;) ; }"
      cat shape.orig; } >hangs/shape.c
    run build hangs
    expect_status 3
    expect_err "shape function code has a constructor or an indirect function"
    cp shape.orig hangs/shape.c
    printf "%s\n" "__attribute__((constructor)) static void never(void) { for (;;) ; }" \
        >>hangs/shape.c
    run build hangs
    expect_status 3
    expect_err "shape function code has a constructor or an indirect function: code that runs when the library loads"
    test ! -e hangs/build/libhangs.so'

test_done
