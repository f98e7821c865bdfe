#!/bin/sh
# The C++ examples (share/neuronop/examples/*_cxx): each builds from a manifest of only
# custom_op.load's arguments with its ops from NEURON_LIBRARY, inspect shows its namespace
# and ops, each op gives exact values on known inputs, the C++ twins of the C examples give
# byte-identical outputs on the same random inputs, and every example's own tests pass under
# --memcheck.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
# values FILE: the values of a .npy file, space-separated
values() { npy read "$1" | tail -n +2 | tr '\n' ' ' | sed 's/ $//'; }
# same GOT WANT: equal and not empty
same() { [ -n "$1" ] && [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }

CXX_EXAMPLES="negate_cxx relu_cxx relu_tcm_cxx relu_multicore_cxx add_cxx tensorlib_cxx"
for ex in $CXX_EXAMPLES relu relu_tcm relu_multicore add softclip; do
    copy_example $ex "$WORK/$ex"
done

# example namespace ops (as build prints them)
while read -r ex ns ops; do
    test_expect "$ex builds from custom_op.load's arguments; its ops come from NEURON_LIBRARY" '
        if grep -q "^ops:" '"$ex"'/neuronop.yaml; then exit 1; fi
        run build '"$ex"'
        expect_status 0
        expect_out "'"$ex"': built '"$ex"'/build/lib'"$ex"'.so"
        expect_out "namespace: '"$ns"'"
        expect_out "ops: '"$ops"'"' </dev/null
done <<EOF
negate_cxx negate_ops negate(tensor)
relu_cxx relu_ops relu_forward(tensor), relu_backward(tensor, tensor)
relu_tcm_cxx relu_tcm_ops relu_forward(tensor)
relu_multicore_cxx relu_multicore_ops relu_forward(tensor)
add_cxx add_ops add(tensor, tensor)
tensorlib_cxx tensorlib_ops softclip(tensor, double, scalar), poly(tensor, int64, scalar, double)
EOF

test_expect "relu_multicore_cxx is a multicore library; the others run on one core" '
    run build relu_multicore_cxx
    expect_out "multicore: yes"
    run build relu_tcm_cxx
    expect_out "multicore: no"'

test_expect "inspect shows the namespace and the ops of the C++ examples" '
    run inspect negate_cxx/build/libnegate_cxx.so
    expect_status 0
    expect_out "\"namespace\": \"negate_ops\""
    expect_out "\"name\": \"negate\", \"args\": [\"tensor\"], \"kernel\": \"negate\", \"shape\": \"negate_shape\""
    run inspect relu_cxx/build/librelu_cxx.so
    expect_out "\"namespace\": \"relu_ops\""
    expect_out "\"name\": \"relu_backward\", \"args\": [\"tensor\", \"tensor\"], \"kernel\": \"relu_backward\", \"shape\": \"relu_bwd_shape\""
    run inspect relu_multicore_cxx/build/librelu_multicore_cxx.so
    expect_out "\"namespace\": \"relu_multicore_ops\""
    expect_out "\"multicore\": true"
    run inspect tensorlib_cxx/build/libtensorlib_cxx.so
    expect_out "\"namespace\": \"tensorlib_ops\""
    expect_out "\"name\": \"poly\", \"args\": [\"tensor\", \"int64\", \"scalar\", \"double\"], \"kernel\": \"poly\", \"shape\": \"poly_shape\""'

# ---- each op on known inputs: exact values ------------------------------------------------

test_expect "negate_cxx negates (accessor<float, 1>), by OP and by ns::OP" '
    run run negate_cxx negate arange:5
    expect_status 0
    expect_out "negate_ops::negate: ok on 1 core"
    expect_out "values: -0 -1 -2 -3 -4"
    run run negate_cxx negate_ops::negate full:3:-2.5
    expect_status 0
    expect_out "values: 2.5 2.5 2.5"'

test_expect "a mistyped op or a wrong namespace is told the name that works, namespace and all" '
    for name in relu_ops::relu_foward my_ops::relu_forward relu_foward; do
        run run relu_cxx $name zeros:4
        expect_status 2
        expect_err "neuronop: error: no op '\''$name'\'' in library '\''relu_cxx'\''; did you mean '\''relu_ops::relu_forward'\''?"
        expect_err "its ops: relu_ops::relu_forward(tensor) relu_ops::relu_backward(tensor, tensor)"
    done'

test_expect "relu_cxx relu_forward zeroes the negatives of a 2-D tensor (a[i][j])" '
    npy write x.npy "<f4" 2x3 1.5 -2 0 -0.25 3 -7
    run run relu_cxx relu_forward x.npy -o out.npy
    expect_status 0
    expect_out "output: 2x3 float32"
    same "$(values out.npy)" "1.5 0 0 0 3 0"
    run run relu_cxx relu_forward full:2x2:-1
    expect_out "values: 0 0 0 0"'

test_expect "relu_cxx relu_backward passes the gradient where the input was positive" '
    npy write g.npy "<f4" 2x3 10 20 30 40 50 60
    npy write x.npy "<f4" 2x3 1 -1 0 2 -0.5 0.25
    run run relu_cxx relu_backward g.npy x.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "10 0 0 40 0 60"'

test_expect "relu_tcm_cxx is exact across its 1024-float chunks" '
    run run relu_tcm_cxx relu_forward arange:6
    expect_status 0
    expect_out "values: 0 1 2 3 4 5"
    run run negate_cxx negate arange:2050 -o neg.npy
    expect_status 0
    run run relu_tcm_cxx relu_forward neg.npy -o out.npy
    expect_status 0
    expect_out "output: 2050 float32  min 0  max 0"
    run run relu_tcm_cxx relu_forward arange:2050 -o out.npy
    expect_status 0
    same "$(values out.npy)" "$(seq 0 2049 | tr "\n" " " | sed "s/ \$//")"'

test_expect "relu_multicore_cxx gives exact values on sizes no core count divides" '
    npy write x.npy "<f4" 11 -5 4 -3 2 -1 0 1 -2 3 -4 5
    for cores in 1 3 8; do
        run run relu_multicore_cxx relu_forward x.npy --cores $cores -o out.npy
        expect_status 0
        expect_out "ok on $cores core"
        same "$(values out.npy)" "0 4 0 2 0 0 1 0 3 0 5"
    done
    run run relu_multicore_cxx relu_forward arange:10
    expect_status 0
    expect_out "ok on 8 cores"
    expect_out "values: 0 1 2 3 4 5 6 7 8 9"
    run run relu_multicore_cxx relu_forward full:1:3.5
    expect_status 0
    expect_out "values: 3.5"'

test_expect "relu_multicore_cxx reads nothing past the end: 1, 10, 1023 and 32x4096 on 1, 3 and 8 cores" '
    for size in 1 10 1023 32x4096; do
        for cores in 1 3 8; do
            run run relu_multicore_cxx relu_forward randn:$size --cores $cores -o out.npy
            expect_status 0
            expect_err "device checks: 0 errors, 0 warnings"
        done
    done'

test_expect "add_cxx adds through two read streams and a write stream" '
    run run add_cxx add arange:4 full:4:0.25
    expect_status 0
    expect_out "add_ops::add: ok on 1 core"
    expect_out "values: 0.25 1.25 2.25 3.25"
    run run add_cxx add arange:1100 arange:1100 -o out.npy
    expect_status 0
    same "$(values out.npy)" "$(seq 0 2 2198 | tr "\n" " " | sed "s/ \$//")"'

test_expect "tensorlib_cxx poly: scale * x^exponent + shift with int64, Scalar and double args" '
    run run tensorlib_cxx poly arange:4 2 3 0.5
    expect_status 0
    expect_out "tensorlib_ops::poly: ok on 1 core"
    expect_out "values: 0.5 3.5 12.5 27.5"
    run run tensorlib_cxx poly arange:4 3 -0.5 1
    expect_status 0
    expect_out "values: 1 0.5 -3 -12.5"'

test_expect "tensorlib_cxx softclip: clamp(exp(x), 0, limit) + alpha * x, alpha an int or a double" '
    run run tensorlib_cxx softclip zeros:2x2 10 2
    expect_status 0
    expect_out "values: 1 1 1 1"
    npy write x.npy "<f4" 3 0 1 -1
    run run tensorlib_cxx softclip x.npy 2 0.5
    expect_status 0
    expect_out "values: 1 2.5 -0.132121"
    run run tensorlib_cxx softclip x.npy 2 0
    expect_status 0
    expect_out "values: 1 2 0.367879"'

# ---- the C++ twins give the C examples' bytes ------------------------------------------

# c_example cxx_example op args...
while read -r c cxx op args; do
    test_expect "$cxx $op gives byte-identical output to $c on $args" '
        run run '"$c $op $args"' -o c.npy
        expect_status 0
        run run '"$cxx $op $args"' -o cxx.npy
        expect_status 0
        cmp c.npy cxx.npy' </dev/null
done <<EOF
relu relu_cxx relu_forward randn:32x4096
relu relu_cxx relu_backward randn:64x33 randn:64x33
relu_tcm relu_tcm_cxx relu_forward randn:32x4096
relu_tcm relu_tcm_cxx relu_forward randn:1025
relu_multicore relu_multicore_cxx relu_forward randn:32x4096
relu_multicore relu_multicore_cxx relu_forward randn:1023 --cores 3
add add_cxx add randn:1000 rand:1000
softclip tensorlib_cxx softclip randn:4x8 10 0.5
EOF

# ---- memcheck, and math functions ----------------------------------------------------------

for ex in $CXX_EXAMPLES; do
    test_expect "$ex: its own tests pass under --memcheck" '
        run test --memcheck '"$ex"'
        expect_status 0
        expect_out " 0 failed"'
done

test_expect "a C++ kernel and a C++ reference that call math functions link (libm)" '
    grep -q "std::exp" tensorlib_cxx/ref.cpp
    sed -i "s/out_acc\[i\] = -in_acc\[i\];/out_acc[i] = -std::exp(static_cast<float>(in_acc[i]));/" negate_cxx/negate.cpp
    sed -i "s/#include <stdint.h>/#include <cmath>\n#include <stdint.h>/" negate_cxx/negate.cpp
    grep -q "std::exp" negate_cxx/negate.cpp
    run build negate_cxx
    expect_status 0
    run run negate_cxx negate zeros:2
    expect_status 0
    expect_out "values: -1 -1"'

test_expect "a failed link shows what the linker said, not only its exit status" '
    copy_example negate_cxx undef
    printf "extern \"C\" int not_defined_anywhere(void);\nint call_it() { return not_defined_anywhere(); }\n" >> undef/ref.cpp
    run build undef
    expect_status 3
    expect_err "linking failed"
    expect_err "undefined reference to \`not_defined_anywhere'\''"'

test_done
