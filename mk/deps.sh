#!/bin/sh
# mk/deps.sh - installs the Debian packages neuronop needs to build and test, if missing.
#
# As root it runs apt-get (update first: a fresh machine has no package lists); otherwise it
# prints the exact command to run and fails, so `make demo` and `make check` never half-work.
# Usage: mk/deps.sh [build|test]   (test includes build)
set -eu

build_pkgs="gcc g++ make pkg-config libyaml-dev libtcc-dev tcc libxxhash-dev libjansson-dev libseccomp-dev libsleef-dev"
# python3-torch (for /usr/bin/python3) and libtorch-dev: real PyTorch/libtorch 1.13, the oracle
# that tensor and element semantics are tested against, and the Python bridge's host.
test_pkgs="libcmocka-dev perl jq libxml2-utils lintian python3-yaml clang bash-completion strace procps time
    python3-torch libtorch-dev"

want=$build_pkgs
[ "${1:-build}" = test ] && want="$build_pkgs $test_pkgs"

# one dpkg-query for all of them (`make check` runs this first: a call per package was 2 s)
# shellcheck disable=SC2086
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $want 2>/dev/null |
    awk '/ ok installed$/ { print $1 }' | tr '\n' ' ') "
missing=
for p in $want; do
    case $installed in
    *" $p "*) ;;
    *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "neuronop: error: missing Debian packages:$missing" >&2
    echo "install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
