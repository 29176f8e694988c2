#!/usr/bin/env bash
# A runtime takes its descriptors with it (tests/e2e/descriptors.c): after
# uswap_runtime_destroy, in the process, a fork child, a grandchild and an
# exec'd member, the descriptors are those of before the runtime; with
# and without the compressed pool (soak bug 3: the reclaimer's io_uring
# in fork children, the cached pidfd, the budget's descriptor for exec).
# The runtime's descriptors are high and close-on-exec; after
# uswap_runtime_detach, no descriptor or shared mapping is left and the
# memory is byte-exact.
set -u
b=${USWAP_BUILD:-build}/tests/e2e/descriptors
for pool in off lz4; do
	$b $pool
	rc=$?
	[ $rc -eq 0 ] || { echo "descriptors $pool: exit $rc"; exit $rc; }
done
