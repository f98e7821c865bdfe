#!/bin/sh
# mk/deb.sh - builds neuronop_VERSION_ARCH.deb with Debian's own dpkg-deb (`make deb`).
#
# The package is `make install PREFIX=/usr` into a staging folder, plus what Debian policy
# asks of every package: compressed man pages, a copyright file and a changelog under
# /usr/share/doc/neuronop, a stripped binary, and a DEBIAN/control naming the packages
# neuronop needs at run time: those owning the shared libraries the binary loads (found with
# ldd and dpkg -S; `make deb` links libyaml, libxxhash and libjansson dynamically for this),
# tcc for its runtime libtcc1.a and libc6-dev for the headers kernels include.  CXX_DEPENDS
# is for the C++ front end: it will add g++ there once neuronop compiles C++ sources.
#
# Usage: mk/deb.sh BIN OUTDIR   (BIN: the binary `make deb` linked with STATIC_DEPS=no from
# the objects in OUTDIR, the make O= folder; prints the path of the .deb it wrote)
set -eu
bin=$1
outdir=$2
CXX_DEPENDS=${CXX_DEPENDS:-}

version=$(sed -n 's/^#define NOP_VERSION "\(.*\)"/\1/p' include/libneuronop.h)
arch=$(dpkg --print-architecture)
name=neuronop_${version}_${arch}
stage=$outdir/$name
rm -rf "$stage"
make -s install DESTDIR="$stage" PREFIX=/usr O="$outdir" BIN="$bin" STATIC_DEPS=no >/dev/null

doc=$stage/usr/share/doc/neuronop
mkdir -p "$doc" "$stage/DEBIAN"
find "$stage/usr/share/man" -type f -exec gzip -9n {} +
strip --strip-unneeded --remove-section=.comment "$stage/usr/bin/neuronop"
cat >"$doc/copyright" <<EOT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: neuronop
Source: the neuronop source tree

Files: *
Copyright: 2026 the neuronop authors
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify, merge,
 publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 to whom the Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE.
EOT
date=$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
printf 'neuronop (%s) unstable; urgency=medium\n\n  * Built from the neuronop source tree.\n\n -- neuronop authors <neuronop@example.org>  %s\n' \
    "$version" "$date" | gzip -9n >"$doc/changelog.gz"

# the packages of the shared libraries it loads, in a stable order: each library by its
# resolved path and by the path ldd found (usrmerge registers some under /lib), in one dpkg -S
# (each one reads dpkg's whole file list: half a second a call with torch installed)
shlibs=$(ldd "$bin" | awk '/=> \// { print $3 }' | while read -r lib; do
    readlink -f "$lib"
    echo "$lib"
done | xargs -r dpkg -S 2>/dev/null | cut -d: -f1 | sort -u | paste -sd, - | sed 's/,/, /g')
# python3 for the neuronop Python package (usr/lib/python3/dist-packages); torch is only
# recommended: it is 600 MiB, and everything but `neuronop python` works without it
depends="${shlibs:-libc6}, tcc, libc6-dev, python3${CXX_DEPENDS:+, $CXX_DEPENDS}"
size=$(du -sk "$stage/usr" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOT
Package: neuronop
Version: $version
Architecture: $arch
Maintainer: neuronop authors <neuronop@example.org>
Installed-Size: $size
Depends: $depends
Recommends: python3-torch
Section: devel
Priority: optional
Homepage: https://example.org/neuronop
Description: build, run, check and benchmark GPSIMD custom operators
 neuronop builds custom-operator libraries for the GPSIMD cores of AWS
 Neuron devices, runs their kernels on a virtual eight-core GPSIMD array
 that checks every rule of the device and reports a broken one, benchmarks
 them with a cost model of the device, and runs their test cases under
 every core order and count, for CI.
EOT
(cd "$stage" && find usr -type f -exec md5sum {} + | sort -k2) >"$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
find "$stage/usr" -type d -exec chmod 755 {} +
# Reproducible: every file dated like the changelog (the last commit), so the same tree makes
# the same bytes (and t0502 need not run lintian again on a package it has checked).
find "$stage" -exec touch -h -d "$date" {} +
SOURCE_DATE_EPOCH=$(date -u -d "$date" +%s) \
    dpkg-deb --root-owner-group -Zxz --build "$stage" "$outdir/$name.deb" >/dev/null
rm -rf "$stage"
echo "$outdir/$name.deb"
