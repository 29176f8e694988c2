#!/bin/sh
# Install what the build and the tests need, on Debian, when missing.
# Runs as root (or with sudo available); does nothing when all is present.
set -e
need=""
for pkg in build-essential clang make libasan8 libtsan2 libubsan1 python3 liblz4-dev libzstd-dev zlib1g-dev liburing-dev libsodium-dev libclang-rt-14-dev libjemalloc2 universal-ctags redis-tools redis-server libhiredis-dev gdb clang-format; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
done
[ -z "$need" ] && exit 0
echo "deps: installing$need"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
