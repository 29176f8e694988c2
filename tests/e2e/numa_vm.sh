#!/bin/sh
# Description: the NUMA test machine, reduced (tests/numa-vm/run --quick, about 5 minutes): qemu (software emulation) with two CPU nodes, a memory-only node and a virtio disk on each CPU node; device choice by the memory's or the CPU's node, uswap on the raw disks, and demotion to the memory-only node with promotion back (tests/numa-vm/README.md).  Needs root to install qemu and fetch Debian's kernel; skips without root or without network.  USWAP_SKIP_NUMA_VM=1 skips it.
# Weight: 110
# Timeout: 1200
B=${USWAP_BUILD:-$(dirname "$0")/../../build}
case $B in /*) ;; *) B=$(pwd)/$B;; esac
[ "${USWAP_SKIP_NUMA_VM:-0}" = 1 ] && { echo "SKIP: USWAP_SKIP_NUMA_VM=1"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: the NUMA test machine needs root (apt-get of qemu, Debian's kernel)"; exit 77; }
[ -x "$B/uswap" ] || { echo "SKIP: $B/uswap is not built"; exit 77; }
cd "$(dirname "$0")/../.." || exit 1
NUMA_VM_SETUP_SKIP=1 NUMA_VM_TIMEOUT=1100 exec tests/numa-vm/run --quick "$B"
