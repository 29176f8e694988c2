#!/usr/bin/env bash
# A runtime takes its descriptors with it (tests/e2e/descriptors.c): after
# uswap_runtime_destroy, in the process, a fork child, a grandchild and an
# exec'd member, the descriptors are those of before the runtime; with
# and without the compressed pool (soak bug 3: the reclaimer's io_uring
# in fork children, the cached pidfd, the budget's descriptor for exec).
set -u
b=${USWAP_BUILD:-build}/tests/e2e/descriptors
for pool in off lz4; do
	$b $pool
	rc=$?
	[ $rc -eq 0 ] || { echo "descriptors $pool: exit $rc"; exit $rc; }
done
