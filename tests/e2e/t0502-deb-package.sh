#!/bin/sh
# make deb: a Debian package that lintian finds no error in, whose binary, unpacked anywhere,
# starts a new library and passes its tests with no environment variables.
. ./lib.sh

if [ -n "${NEURONOP_SANITIZED:-}" ] || ! command -v dpkg-deb >/dev/null 2>&1; then
    echo "1..0 # SKIP packaging is checked by the plain run, where dpkg-deb is installed"
    exit 0
fi

test_expect "make deb builds neuronop_VERSION_ARCH.deb with its contents and dependencies" '
    # the objects of the binary under test: a package after a build compiles nothing again
    make -s -C "$NEURONOP_SRC" deb >deb.out 2>deb.err || { cat deb.err; exit 1; }
    deb=$(cat deb.out)
    case $deb in */neuronop_*_*.deb) ;; *) echo "unexpected: $deb"; exit 1 ;; esac
    dpkg-deb -f "$deb" Package Depends >fields
    grep -qx "Package: neuronop" fields
    grep -q "tcc" fields
    grep -q "libc6-dev" fields
    grep -q "python3" fields
    dpkg-deb -c "$deb" >contents
    for f in usr/lib/python3/dist-packages/neuronop/custom_op.py \
        usr/share/neuronop/python-compat/torch_neuronx/xla_impl/custom_op.py \
        usr/share/man/man1/neuronop-python.1.gz \
        usr/bin/neuronop usr/share/neuronop/include/neuronop.h \
        usr/share/neuronop/examples/relu/neuronop.yaml usr/share/man/man1/neuronop-new.1.gz \
        usr/share/man/man3/neuronop-cxx.3.gz usr/share/neuronop/include/torch/torch.h \
        usr/share/bash-completion/completions/neuronop usr/share/doc/neuronop/copyright; do
        grep -q "\./$f\$" contents || { echo "missing $f"; exit 1; }
    done
    cp "$deb" neuronop.deb'

test_expect "the unpacked binary starts a library and passes its tests, finding share/ itself" '
    dpkg-deb -x neuronop.deb root
    env -u NEURONOP_SHARE_DIR root/usr/bin/neuronop new pkg_ops >out 2>err || { cat err; exit 1; }
    env -u NEURONOP_SHARE_DIR root/usr/bin/neuronop test pkg_ops >out 2>err || { cat out err; exit 1; }
    grep -q "4 passed, 0 failed" out'

# lintian takes 8 s of CPU: its report on a package is kept under out/e2e-cache by the hash of
# the package (make deb is reproducible: the same tree makes the same bytes) and lintian's
# version, and only a package it has not seen is checked again.
test_expect "lintian reports no error" '
    if ! command -v lintian >/dev/null 2>&1; then echo "lintian is not installed"; exit 1; fi
    key=$( (cat neuronop.deb; dpkg-query -W -f="\${Version}" lintian || lintian --version) |
        sha256sum | cut -c1-16)
    kept="$NEURONOP_SRC/out/e2e-cache/lintian-$key"
    if [ ! -f "$kept" ]; then
        lintian --tag-display-limit 0 neuronop.deb >lint 2>&1 || { cat lint; exit 1; }
        mkdir -p "$NEURONOP_SRC/out/e2e-cache"
        cp lint "$kept.tmp.$$"
        mv "$kept.tmp.$$" "$kept"
    fi
    cp "$kept" lint
    ! grep "^E:" lint'

test_done
