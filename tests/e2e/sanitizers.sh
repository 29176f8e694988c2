#!/usr/bin/env bash
# Weight: 250
# The stress and remap tests built with AddressSanitizer+UBSan and with
# ThreadSanitizer (build/asan, build/tsan), with and without the compressed
# pool, the slot allocator's threads, the page I/O and the pool's writeback
# unit tests, two fault-injection scenarios, the kernel writing into pinned
# and managed memory (pinned), protections (protect) and locks (mlock), the
# region table against the reclaimer (regions_race), madvise advice
# (fork_advice), the watchdog's (fault threads that fail, stop serving, or
# lose their userfaultfd), a runtime leaving its tree (uswap_runtime_detach:
# uswap's threads on descriptor tables of their own), and the fork,
# fork_share, reap, stopped-member and descriptors tests;
# any sanitizer report fails.  A child after fork
# starts threads of its own (its runtime carries on): TSan allows that with
# die_after_fork=0, but its thread registry then trips over the parent's
# threads ("dup thread with used id"), so the fork tests and reap run
# under ASan only.
set -u
cd "$(dirname "$0")/../.."
for san in asan tsan; do
	make -s SAN=$san -j2 build/$san/tests/e2e/stress build/$san/tests/e2e/remap \
		build/$san/tests/e2e/readahead build/$san/tests/e2e/fork build/$san/tests/e2e/fork_share build/$san/tests/e2e/reap \
		build/$san/tests/e2e/inject build/$san/tests/e2e/encrypt build/$san/tests/e2e/hold build/$san/tests/e2e/watchdog build/$san/tests/e2e/descriptors \
		build/$san/tests/e2e/pinned build/$san/tests/e2e/protect build/$san/tests/e2e/mlock \
		build/$san/tests/e2e/evict \
		build/$san/tests/e2e/regions_race build/$san/tests/e2e/fork_advice \
		build/$san/tests/unit/crypt build/$san/tests/unit/swapfile_threads \
		build/$san/tests/unit/page_io build/$san/tests/unit/zswap build/$san/tests/unit/slab >/dev/null || exit 1
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66 die_after_fork=0" ASAN_OPTIONS="halt_on_error=1 exitcode=66"
	build/$san/tests/e2e/stress --size 64M --max 8M --threads 3 --ops 2000 --expect-swap || { echo "$san: stress failed"; exit 1; }
	build/$san/tests/e2e/stress --size 64M --max 8M --folio 4K --threads 2 --ops 2000 --expect-swap || { echo "$san: stress 4K failed"; exit 1; }
	USWAP_ZSWAP=lz4 USWAP_ZSWAP_MAX=10 build/$san/tests/e2e/stress --size 64M --max 8M --threads 3 --ops 2000 --expect-swap ||
		{ echo "$san: stress with zswap failed"; exit 1; }
	USWAP_ZSWAP=zstd USWAP_ZSWAP_UNIT=page USWAP_SWAP=none USWAP_ZSWAP_MAX=80 \
		build/$san/tests/e2e/stress --size 32M --max 8M --folio 16K --threads 2 --ops 2000 --expect-swap ||
		{ echo "$san: stress with zswap and no swap file failed"; exit 1; }
	# The slot allocator's two levels of locks: threads that allocate,
	# free, dup and free each other's slots; discards racing frees.
	build/$san/tests/unit/swapfile_threads >/dev/null || { echo "$san: unit swapfile_threads failed"; exit 1; }
	build/$san/tests/unit/page_io >/dev/null || { echo "$san: unit page_io failed"; exit 1; }
	# uswap's own memory (slab.c) from four threads.
	build/$san/tests/unit/slab >/dev/null || { echo "$san: unit slab failed"; exit 1; }
	# The pool's writeback in rounds, racing loads and frees; failing writes.
	build/$san/tests/unit/zswap writeback >/dev/null || { echo "$san: unit zswap writeback failed"; exit 1; }
	build/$san/tests/e2e/remap || { echo "$san: remap failed"; exit 1; }
	# The reclaimer's reads of the region table against threads that map
	# and unmap regions (its idle loop, the device refusing every write).
	build/$san/tests/e2e/regions_race 3 >/dev/null || { echo "$san: regions_race failed"; exit 1; }
	build/$san/tests/e2e/regions_race 2 lz4 >/dev/null || { echo "$san: regions_race lz4 failed"; exit 1; }
	# Advice that reorders the LRU and splits regions (no fork).
	build/$san/tests/e2e/fork_advice pageout 16K lz4 >/dev/null || { echo "$san: fork_advice pageout failed"; exit 1; }
	build/$san/tests/e2e/fork_advice populate 64K >/dev/null || { echo "$san: fork_advice populate failed"; exit 1; }
	build/$san/tests/e2e/readahead || { echo "$san: readahead failed"; exit 1; }
	# Holding the memory resident (core dumps, uswap debug) while a
	# thread writes, in-process and through the budget.
	build/$san/tests/e2e/hold >/dev/null || { echo "$san: hold failed"; exit 1; }
	# Reads that fail their checksum (SIGBUS in the program), and a
	# userfaultfd copy that finds a page mapped already.
	build/$san/tests/e2e/inject corrupt >/dev/null || { echo "$san: inject corrupt failed"; exit 1; }
	build/$san/tests/e2e/inject uffd_eexist 16K >/dev/null || { echo "$san: inject uffd_eexist failed"; exit 1; }
	# The watchdog: fault threads started again, a spare for a stuck one,
	# and the end (status 124: fdtable.c) when the userfaultfd is closed.
	USWAP_INJECT=uffd_read_eio=300 build/$san/tests/e2e/watchdog serve >/dev/null 2>&1 ||
		{ echo "$san: watchdog, reads that fail, failed"; exit 1; }
	USWAP_INJECT=fault_stall=2000 build/$san/tests/e2e/watchdog serve >/dev/null 2>&1 ||
		{ echo "$san: watchdog, a stuck thread, failed"; exit 1; }
	build/$san/tests/e2e/watchdog close >/dev/null 2>&1
	[ $? -eq 124 ] || { echo "$san: watchdog close did not exit 124"; exit 1; }
	# Encryption at rest: sealed batches and writeback, a tampered slot.
	build/$san/tests/unit/crypt >/dev/null || { echo "$san: unit crypt failed"; exit 1; }
	build/$san/tests/e2e/encrypt pool 16K >/dev/null || { echo "$san: encrypt pool failed"; exit 1; }
	build/$san/tests/e2e/encrypt tamper move_seal >/dev/null || { echo "$san: encrypt tamper failed"; exit 1; }
	# Memory read back in as a runtime leaves its tree; nothing of it left.
	build/$san/tests/e2e/descriptors --detach lz4 >/dev/null || { echo "$san: descriptors --detach failed"; exit 1; }
	# Pinned pages under reclaim (io_uring fixed buffers, O_DIRECT), the
	# moves of eviction and their refusals; protections; locks.
	pdir=$(mktemp -d "${TMPDIR:-/var/tmp}/uswap-san.XXXXXX")
	for m in uring-raw odirect vmsplice; do
		build/$san/tests/e2e/pinned --api $m "$pdir" >/dev/null ||
			{ echo "$san: pinned $m failed"; rm -rf "$pdir"; exit 1; }
	done
	rm -rf "$pdir"
	build/$san/tests/e2e/protect --api whole guard >/dev/null || { echo "$san: protect failed"; exit 1; }
	for s in partial wait hole; do
		build/$san/tests/e2e/evict $s >/dev/null || { echo "$san: evict $s failed"; exit 1; }
	done
	# Not "future": mlockall() would lock (and bring in) the sanitizer's
	# shadow memory too.
	for s in lock toolarge madvise raw; do
		build/$san/tests/e2e/mlock --api $s >/dev/null || { echo "$san: mlock $s failed"; exit 1; }
	done
	if [ $san = asan ]; then
		build/$san/tests/e2e/fork 16K lz4 || { echo "$san: fork failed"; exit 1; }
		build/$san/tests/e2e/fork_share 16K lz4 >/dev/null || { echo "$san: fork_share failed"; exit 1; }
		build/$san/tests/e2e/fork_share 4K off >/dev/null || { echo "$san: fork_share 4K failed"; exit 1; }
		build/$san/tests/e2e/reap >/dev/null || { echo "$san: reap failed"; exit 1; }
		build/$san/tests/e2e/watchdog stopped >/dev/null || { echo "$san: watchdog stopped failed"; exit 1; }
		build/$san/tests/e2e/descriptors lz4 >/dev/null || { echo "$san: descriptors failed"; exit 1; }
		build/$san/tests/e2e/fork_advice wipe 64K lz4 >/dev/null || { echo "$san: fork_advice wipe failed"; exit 1; }
		build/$san/tests/e2e/fork_advice dontfork 16K >/dev/null || { echo "$san: fork_advice dontfork failed"; exit 1; }
		build/$san/tests/e2e/encrypt fork 64K pool >/dev/null || { echo "$san: encrypt fork failed"; exit 1; }
		for s in child sibling; do
			build/$san/tests/e2e/evict $s >/dev/null || { echo "$san: evict $s failed"; exit 1; }
		done
		vdir=$(mktemp -d "${TMPDIR:-/var/tmp}/uswap-san.XXXXXX")
		build/$san/tests/e2e/pinned --api vm_writev "$vdir" >/dev/null ||
			{ echo "$san: pinned vm_writev failed"; rm -rf "$vdir"; exit 1; }
		rm -rf "$vdir"
	fi
done
