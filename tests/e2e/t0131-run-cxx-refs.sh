#!/bin/sh
# The device rules through C++ element references (tests/fixtures/cxx/refs): an element of
# accessor<T, N>() is a T & into the tensor, checked and counted when it is made; what a C
# kernel's nt_get/nt_set would be told, a C++ kernel is told in its own terms.  Where the
# C++ kernel has a C twin (tests/fixtures/cxx/refs_c, the same op names), the twin's report
# and access counts are the expectation: a read of never-written output through a writable
# accessor, out[i] += x and out[i] = std::max(out[i], c).
. ./lib.sh

cp -R "$NEURONOP_SRC/tests/fixtures/cxx/refs" "$WORK/refs"
cp -R "$NEURONOP_SRC/tests/fixtures/cxx/refs_c" "$WORK/refs_c"
rm -rf "$WORK/refs/build" "$WORK/refs_c/build"

test_expect "the rule kernels build, and their C twins" '
    run build refs
    expect_status 0
    run build refs_c
    expect_status 0
    run build refs/twins.yaml
    expect_status 0'

test_expect "a write to an input through a reference is stopped at the next element access" '
    run run refs write_input_then_read arange:8
    expect_status 1
    expect_err "cxx_refs::write_input_then_read: core 0: error: accessor<float, N>()[...] = v: writes to an input tensor"
    expect_err "1 error, 0 warnings"
    if grep -q "not reached" out; then false; fi'

test_expect "a write to an input through a kept float & is found at the kernel's end" '
    run run refs write_input_late arange:8
    expect_status 1
    expect_err "cxx_refs::write_input_late: core 0: error: accessor<float, N>()[...] = v: writes to an input tensor"
    expect_err "1 error, 0 warnings"'

test_expect "of several float & kept into an input, a write through an earlier one is found" '
    run run refs write_input_kept arange:8
    expect_status 1
    expect_err "cxx_refs::write_input_kept: core 0: error: accessor<float, N>()[...] = v: writes to an input tensor"
    expect_err "1 error, 0 warnings"'

test_expect "reading an input through a non-const copy's accessor is allowed" '
    run run refs read_input_copy arange:8
    expect_status 0
    expect_out "values: 0 2 4 6 8 10 12 14"
    expect_err "0 errors, 0 warnings"'

test_expect "a reference past the end of a writable accessor stops the core" '
    run run refs write_out_of_range arange:8
    expect_status 1
    expect_err "core 0: error: accessor<float, N>()[...]: index 8 of dimension 0 is out of range for an 8 tensor"'

test_expect "output elements no reference was made to are unwritten output" '
    run run refs half_written arange:8
    expect_status 1
    expect_err "error: 4 of 8 output elements were written by no core, the first at element 4"'

test_expect "reading the output early through a read-only accessor is an initcheck error" '
    run run refs read_output_early arange:8
    expect_status 1
    expect_err "core 0: error: accessor<float, N>()[...](offset=0, n=1): reads output elements no core has written yet (initcheck)"'

test_expect "each element reference is one standard-accessor element for the cost model" '
    run bench refs read_input_copy arange:8 --warmup 0 --iters 1
    expect_status 0
    grep -E "^ +0 +16 " out'

# The C twin's report is the reference (t0110 holds the rule fixtures' pairs the same way):
# exit status, "OP: core N: error:" and the counts, the C++ op's namespace aside.
report_key() {
    sed -e "s/^neuronop: [A-Za-z_][A-Za-z0-9_]*::/neuronop: /" -e "s/: error: .*/: error:/" "$1" |
        grep -E "^neuronop: ([a-z_]*: core [0-9]*: error:|device checks:)"
}
test_expect "reading never-written output through a writable accessor is its C twin's initcheck error" '
    run run refs_c read_output_writable arange:8
    expect_status 1
    expect_err "core 0: error: nt_get_f32(offset=0, n=1): reads output elements no core has written yet (initcheck)"
    report_key err >c.key
    run run refs read_output_writable arange:8
    expect_status 1
    expect_err "core 0: error: accessor<float, N>()[...](offset=0, n=1): reads output elements no core has written yet (initcheck)"
    report_key err >cxx.key
    diff -u c.key cxx.key'

test_expect "negating never-written output through a writable accessor is its C twin's initcheck error" '
    run run refs_c negate_unwritten arange:8
    expect_status 1
    expect_err "core 0: error: nt_get_f32(offset=0, n=1): reads output elements no core has written yet (initcheck)"
    report_key err >c.key
    run run refs/twins.yaml negate_unwritten arange:8
    expect_status 1
    expect_err "core 0: error: accessor<float, N>()[...](offset=0, n=1): reads output elements no core has written yet (initcheck)"
    report_key err >cxx.key
    diff -u c.key cxx.key'

test_expect "a float & kept while other elements are reached, then written, is a write" '
    run run refs keep_then_write arange:8
    expect_status 0
    expect_err "0 errors, 0 warnings"'

test_expect "output written through a pointer made from an element reference is written output" '
    run run refs pointer_write arange:8
    expect_status 0
    expect_out "0 2 4 6 8 10 12 14"
    expect_err "0 errors, 0 warnings"'

std_elems() { awk "/^per core/ { on = 1; next } on && \$1 == 0 { print \$2 }" "$1"; }
for op in accumulate accumulate_zeros; do
    test_expect "out[i] += x and out[i] = std::max(out[i], c) count the accesses of their C twin ($op)" "
        run bench refs_c $op ones:8 --warmup 0 --iters 1
        expect_status 0
        std_elems out >c.n
        run bench refs/twins.yaml $op ones:8 --warmup 0 --iters 1
        expect_status 0
        std_elems out >cxx.n
        test -s c.n && diff -u c.n cxx.n"
done

test_expect "a float & kept and used many times is one reference" '
    run bench refs/twins.yaml kept_sum ones:8 --warmup 0 --iters 1
    expect_status 0
    grep -E "^ +0 +17 " out'

test_done
