#!/usr/bin/env bash
# The remote tier's Redis client (src/swap/redis_store.c) against real
# servers on loopback, started here and stopped at exit whatever happens:
#  - hash slots: the client's against the cluster's own CLUSTER KEYSLOT;
#  - one plain redis-server: values of 4 KiB to 2 MiB written, read back
#    byte for byte, read into a buffer of the wrong size, deleted one by
#    one and by pattern; a server whose maxmemory-policy evicts keys is
#    refused; a password and an ACL user taken, wrong or missing ones
#    refused; a server at its maxmemory refuses writes as a full device;
#  - a Redis Cluster of 3 masters with a replica each (redis-cli --cluster
#    create): the same round trip; then values written, 1000 slots
#    resharded from one master to another behind the client's back, and
#    every value read back through the MOVED redirections; then values
#    written and confirmed on a replica (WAIT 1), the master of a third of
#    them killed with SIGKILL, and every value read back once the cluster
#    has failed over.
# Not yet the swap tier itself (docs/far-memory.md): this is its client.
set -u
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/redis_store
need_cmd redis-server redis-cli python3
. "$(dirname "$0")/redis.lib"

P=$B/tests/e2e/redis_store

# Hash slots, first without a server.
"$P" slots >"$T/slots" || fail "$(cat "$T/slots")"

# One plain server.
read -r single <<<"$(free_ports 1)"
start_server "$single"
"$P" "127.0.0.1:$single" roundtrip >"$T/out" 2>&1 ||
	fail "one server: $(cat "$T/out")"
grep -q 'one server, 1 master' "$T/out" || fail "one server: $(cat "$T/out")"
say "ok: one server"
read -r evicting <<<"$(free_ports 1)"
start_server "$evicting" --maxmemory 64mb --maxmemory-policy allkeys-lru
"$P" "127.0.0.1:$evicting" evicting >"$T/out" 2>&1 ||
	fail "a server that evicts keys: $(cat "$T/out")"
grep -q 'allkeys-lru, not noeviction' "$T/out" || fail "$(cat "$T/out")"
say "ok: a server that may evict keys is refused"

# Credentials: a password, and an ACL user.
read -r secured <<<"$(free_ports 1)"
start_server "$secured" --requirepass s3cret
redis-cli -p "$secured" -a s3cret --no-auth-warning acl setuser alice on '>alicepw' '~*' '&*' '+@all' |
	grep -q OK || fail "ACL SETUSER alice was refused"
RS_PASSWORD=s3cret "$P" "127.0.0.1:$secured" roundtrip >"$T/out" 2>&1 ||
	fail "with the password: $(cat "$T/out")"
RS_USER=alice RS_PASSWORD=alicepw "$P" "127.0.0.1:$secured" roundtrip >"$T/out" 2>&1 ||
	fail "as ACL user alice: $(cat "$T/out")"
for cred in "RS_PASSWORD=wrong" "RS_USER=alice RS_PASSWORD=s3cret" "RS_USER=bob RS_PASSWORD=alicepw"; do
	env $cred "$P" "127.0.0.1:$secured" refused >"$T/out" 2>&1 ||
		fail "$cred: $(cat "$T/out")"
done
"$P" "127.0.0.1:$secured" refused >"$T/out" 2>&1 ||
	fail "without credentials: $(cat "$T/out")"
say "ok: a password and an ACL user taken, wrong or missing credentials refused"

# A server at its maxmemory (noeviction): writes fail as a full device.
read -r small <<<"$(free_ports 1)"
start_server "$small" --maxmemory 16mb --maxmemory-policy noeviction
"$P" "127.0.0.1:$small" full >"$T/out" 2>&1 || fail "full: $(cat "$T/out")"
say "$(grep "ok: full" "$T/out")"

# A cluster of 3 masters with a replica each.
start_cluster
seed=127.0.0.1:${ports[0]}

keys="foo {user1000}.following foo{}{bar} foo{{bar}}zap uswap:{17}:1 x{y}z"
# shellcheck disable=SC2086
"$P" slots $keys | while read -r key slot; do
	want=$(redis-cli -p "${ports[0]}" cluster keyslot "$key")
	[ "$slot" = "$want" ] || fail "slot of $key: $slot, the cluster says $want"
done || exit 1
say "ok: hash slots as the cluster's"

"$P" "$seed" roundtrip >"$T/out" 2>&1 || fail "cluster: $(cat "$T/out")"
grep -q 'cluster, 3 master' "$T/out" || fail "cluster: $(cat "$T/out")"
say "ok: cluster round trip"

from=$(master_id 1)
to=$(master_id 2)
reshard="redis-cli --cluster reshard $seed --cluster-from $from --cluster-to $to --cluster-slots 1000 --cluster-yes >$T/reshard.log 2>&1"
"$P" "$seed" moved "$reshard" >"$T/out" 2>&1 ||
	fail "reads after resharding: $(cat "$T/out") $(tail -3 "$T/reshard.log")"
grep -q 'read back after moved' "$T/out" || fail "moved: $(cat "$T/out")"
say "ok: values read back through MOVED after 1000 slots moved"

victim=$(master_port "$(master_id 3)")
[ -n "$victim" ] || fail "no third master"
pid=$(server_pid "$victim")
[ -n "$pid" ] || fail "no process id for the master on port $victim"
kill_it="kill -KILL $pid"
remaining=()
for p in "${ports[@]}"; do [ "$p" != "$victim" ] && remaining+=("$p"); done
"$P" "$seed" failover "$kill_it" >"$T/out" 2>&1 ||
	fail "reads after a master was killed: $(cat "$T/out")"
grep -q 'read back after failover' "$T/out" || fail "failover: $(cat "$T/out")"
cluster_ok "${remaining[@]}" || fail "the cluster did not fail over"
say "ok: values confirmed on a replica (WAIT 1) read back after their master was killed"
