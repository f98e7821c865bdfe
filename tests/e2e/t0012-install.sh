#!/bin/sh
# make install puts a working neuronop under PREFIX: the installed binary finds its header
# next to itself, with no environment variables.  (make -o: the binary under test is
# installed as it is, never relinked under the scripts running beside this one.)
. ./lib.sh

test_expect "make install DESTDIR=... PREFIX=... installs binary, share and man pages" '
    make -s -C "$NEURONOP_SRC" -o "$NEURONOP" install DESTDIR="$WORK/dest" PREFIX=/opt/np \
        BIN="$NEURONOP" >/dev/null
    test -x dest/opt/np/bin/neuronop
    test -f dest/opt/np/share/neuronop/include/neuronop.h
    test -f dest/opt/np/share/neuronop/include/torchneuron/register.h
    test -f dest/opt/np/share/neuronop/include/neuronop/registry.h
    test -f dest/opt/np/share/neuronop/include/torch/torch.h
    test -f dest/opt/np/share/neuronop/include/torch/detail/accessors.h
    test -f dest/opt/np/share/neuronop/include/neuron/neuron-utils.hpp
    test -f dest/opt/np/share/man/man1/neuronop-build.1
    test -f dest/opt/np/share/man/man5/neuronop.yaml.5
    test -f dest/opt/np/share/man/man3/neuronop-api.3
    test -f dest/opt/np/share/man/man3/neuronop-cxx.3
    test -f dest/opt/np/share/neuronop/include/torch/torch.h
    test ! -d dest/opt/np/share/neuronop/examples/relu/build'

test_expect "the installed neuronop builds an example without NEURONOP_SHARE_DIR" '
    copy_example relu_tcm "$WORK/ex"
    env -u NEURONOP_SHARE_DIR dest/opt/np/bin/neuronop build ex >out 2>err || { cat err; exit 1; }
    grep -q "built" out'

test_expect "the installed neuronop builds and runs a C++ library with its own torch header" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/ops" "$WORK/cx"
    rm -rf "$WORK/cx/build"
    env -u NEURONOP_SHARE_DIR dest/opt/np/bin/neuronop build -v cx >out 2>err || { cat err; exit 1; }
    grep -q -- "-I$WORK/dest/opt/np/share/neuronop/include " err
    env -u NEURONOP_SHARE_DIR dest/opt/np/bin/neuronop run cx relu_forward arange:4 >out 2>err ||
        { cat err; exit 1; }
    grep -q "values: 0 1 2 3" out'

test_expect "the installed neuronop python finds its package and the torch_neuronx stand-in" '
    test -f dest/opt/np/lib/python3/dist-packages/neuronop/custom_op.py
    test -f dest/opt/np/share/neuronop/python-compat/torch_neuronx/xla_impl/custom_op.py
    test ! -e dest/opt/np/lib/python3/dist-packages/torch_neuronx
    printf "from torch_neuronx.xla_impl import custom_op\nprint(custom_op.load.__module__)\n" >s.py
    env -u NEURONOP_SHARE_DIR dest/opt/np/bin/neuronop python s.py >out 2>err || { cat err; exit 1; }
    grep -qx neuronop.custom_op out'

test_done
