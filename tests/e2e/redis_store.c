// SPDX-License-Identifier: MIT
/*
 * redis_store.c - the remote tier's Redis client (src/swap/redis_store.c)
 * against real servers, which redis_store.sh starts:
 *
 *	redis_store slots [KEY...]
 *	redis_store SEED[,SEED...] roundtrip|evicting|refused|full
 *	redis_store SEED[,SEED...] moved|failover COMMAND
 *
 * slots: the CRC16 check value and a slot the specification names, then
 * each KEY's slot for the script to compare with the cluster's.  roundtrip: values of 4 KiB to 2 MiB under keys
 * spread over many hash tags, written, read back and compared byte for
 * byte, read into a buffer of the wrong size (-EMSGSIZE), half deleted
 * one by one and the rest by pattern, and read again (-ENOENT); evicting:
 * a server whose maxmemory-policy evicts keys is refused; refused: the
 * credentials in RS_USER and RS_PASSWORD are (-EACCES); full: writes to a
 * server at its maxmemory fail with -ENOSPC.  RS_USER and RS_PASSWORD,
 * when set, are the store's credentials in every mode.  moved, failover: values written (with WAIT 1 for
 * failover), then COMMAND runs (resharding slots, or killing a master),
 * then every value is read back through the redirections or the
 * failover and compared.  Exit 0 when all is as it should be, 1 with a
 * line saying what was not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_store.h"

#define NR_KEYS		256
#define BATCH		32

static const size_t sizes[] = { 4096, 16384, 65536, 2u << 20 };

static int fail(const char *what, int err)
{
	fprintf(stderr, "FAIL: %s: %s\n", what, err ? strerror(-err) : "");
	return 1;
}

static size_t size_of(unsigned k)
{
	return k % 16 == 15 ? sizes[3] : sizes[k % 3];
}

static void key_of(unsigned k, char *key, size_t len)
{
	/* 64 hash tags, as the swap tier spreads a tree's keys. */
	snprintf(key, len, "uswap-test:{%u}:%u", k % 64, k);
}

static void fill(unsigned char *p, size_t len, unsigned k, unsigned gen)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (k + 1) + gen;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

/*
 * The CRC16 check value and the one slot the specification names, then
 * each KEY's slot, printed for the script to compare with the cluster's
 * own CLUSTER KEYSLOT.
 */
static int check_slots(int argc, char **argv)
{
	int i;

	if (redis_key_slot("123456789", 9) != (0x31c3 & 16383))
		return fail("slot of 123456789: not the CRC16 check value", 0);
	if (redis_key_slot("foo", 3) != 12182)
		return fail("slot of foo: not 12182", 0);
	for (i = 2; i < argc; i++)
		printf("%s %u\n", argv[i],
		       redis_key_slot(argv[i], strlen(argv[i])));
	return 0;
}

static int parse_seeds(const char *s, struct redis_store_config *cfg)
{
	while (*s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);

		if (cfg->nr_seeds == RS_MAX_SEEDS ||
		    redis_parse_hostport(s, len, cfg->seed[cfg->nr_seeds].host,
					 RS_HOST_MAX,
					 &cfg->seed[cfg->nr_seeds].port))
			return -EINVAL;
		cfg->nr_seeds++;
		s += len + (end != NULL);
	}
	return cfg->nr_seeds ? 0 : -EINVAL;
}

/* Run ops [0, n) of kind over keys [first, first + n). */
static int batch(struct redis_store *rs, enum redis_op_kind kind,
		 unsigned first, unsigned n, unsigned char **bufs,
		 char (*keys)[64], int *results)
{
	struct redis_op ops[BATCH];
	unsigned k;
	int ret;

	memset(ops, 0, sizeof(ops));
	for (k = 0; k < n; k++) {
		ops[k].kind = kind;
		ops[k].key = keys[first + k];
		ops[k].keylen = strlen(keys[first + k]);
		ops[k].len = size_of(first + k);
		ops[k].val = bufs[first + k];
		ops[k].buf = bufs[first + k];
	}
	ret = redis_store_run(rs, ops, n);
	for (k = 0; k < n && results; k++)
		results[first + k] = ops[k].result;
	return ret;
}

static int all(struct redis_store *rs, enum redis_op_kind kind,
	       unsigned char **bufs, char (*keys)[64], int *results)
{
	unsigned k;
	int ret, first = 0;

	for (k = 0; k < NR_KEYS; k += BATCH) {
		ret = batch(rs, kind, k, BATCH, bufs, keys, results);
		if (ret && !first)
			first = ret;
	}
	return first;
}

static int verify(unsigned char **bufs, unsigned gen)
{
	unsigned char *want = malloc(sizes[3]);
	unsigned k;

	for (k = 0; k < NR_KEYS; k++) {
		fill(want, size_of(k), k, gen);
		if (memcmp(want, bufs[k], size_of(k))) {
			fprintf(stderr, "FAIL: value %u (%zu bytes) read back "
				"wrong\n", k, size_of(k));
			free(want);
			return 1;
		}
	}
	free(want);
	return 0;
}

/*
 * Write 64 KiB values until the server says it is out of memory: the
 * batch that meets it fails with -ENOSPC, and not before 1 GiB.
 */
static int fill_until_full(struct redis_store *rs)
{
	static unsigned char val[65536];
	char key[64];
	unsigned k;
	int ret = 0;

	memset(val, 0x5a, sizeof(val));
	for (k = 0; k < 16384 && !ret; k++) {
		struct redis_op op = {
			.kind = RS_SET, .key = key, .val = val,
			.len = sizeof(val),
		};

		snprintf(key, sizeof(key), "uswap-test:full:%u", k);
		op.keylen = strlen(key);
		ret = redis_store_run(rs, &op, 1);
	}
	if (ret != -ENOSPC)
		return fail("a full server: not ENOSPC", ret);
	printf("ok: full after %u values of 64 KiB: %s\n", k - 1,
	       strerror(-ret));
	redis_store_close(rs);
	return 0;
}

int main(int argc, char **argv)
{
	static char keys[NR_KEYS][64];
	static int results[NR_KEYS];
	struct redis_store_config cfg = { .nr_seeds = 0, .retry_ms = 30000 };
	unsigned char *bufs[NR_KEYS];
	struct redis_store *rs;
	char err[256];
	unsigned k;
	int ret;

	if (argc >= 2 && !strcmp(argv[1], "slots"))
		return check_slots(argc, argv);
	if (argc < 3 || parse_seeds(argv[1], &cfg)) {
		fprintf(stderr, "usage: redis_store slots [KEY...] | SEEDS roundtrip|evicting|refused|full | "
			"SEEDS moved|failover COMMAND\n");
		return 2;
	}
	cfg.user = getenv("RS_USER");
	cfg.password = getenv("RS_PASSWORD");
	ret = redis_store_open(&cfg, &rs, err, sizeof(err));
	if (!strcmp(argv[2], "refused")) {
		if (ret != -EACCES)
			return fail("wrong credentials were not refused", ret);
		printf("ok: refused: %s\n", err);
		return 0;
	}
	if (ret) {
		fprintf(stderr, "FAIL: open: %s (%s)\n", err, strerror(-ret));
		return 1;
	}
	printf("store: %s, %u master(s)\n",
	       redis_store_is_cluster(rs) ? "cluster" : "one server",
	       redis_store_masters(rs));
	ret = redis_store_check_policy(rs, err, sizeof(err));
	if (!strcmp(argv[2], "evicting")) {
		if (ret != -EPERM)
			return fail("a server that evicts keys was not refused",
				    ret);
		printf("ok: refused: %s\n", err);
		redis_store_close(rs);
		return 0;
	}
	if (ret) {
		fprintf(stderr, "FAIL: policy: %s (%s)\n", err, strerror(-ret));
		return 1;
	}
	if (!strcmp(argv[2], "full"))
		return fill_until_full(rs);
	for (k = 0; k < NR_KEYS; k++) {
		key_of(k, keys[k], sizeof(keys[k]));
		bufs[k] = malloc(sizes[3]);
		if (!bufs[k])
			return fail("malloc", -ENOMEM);
		fill(bufs[k], size_of(k), k, 1);
	}
	if ((ret = all(rs, RS_SET, bufs, keys, NULL)))
		return fail("SET", ret);
	if (!strcmp(argv[2], "failover") &&
	    (ret = redis_store_wait(rs, 1, 5000)))
		return fail("WAIT 1", ret);
	if (argc > 3 && (!strcmp(argv[2], "moved") ||
			 !strcmp(argv[2], "failover"))) {
		if (system(argv[3]) != 0)
			return fail(argv[3], 0);
	}
	for (k = 0; k < NR_KEYS; k++)
		memset(bufs[k], 0, sizes[3]);
	if ((ret = all(rs, RS_GET, bufs, keys, NULL)))
		return fail("GET", ret);
	if (verify(bufs, 1))
		return 1;
	printf("ok: %u values read back after %s\n", NR_KEYS, argv[2]);
	if (!strcmp(argv[2], "roundtrip")) {
		struct redis_op op = {
			.kind = RS_GET, .key = keys[0], .keylen = strlen(keys[0]),
			.buf = bufs[0], .len = size_of(0) - 1,
		};

		if ((ret = redis_store_run(rs, &op, 1)) != -EMSGSIZE)
			return fail("GET of the wrong size: not EMSGSIZE", ret);
		uint64_t deleted = 0;

		for (k = 0; k < NR_KEYS / 2; k += BATCH)
			if ((ret = batch(rs, RS_DEL, k, BATCH, bufs, keys, NULL)))
				return fail("DEL", ret);
		ret = redis_store_delete_matching(rs, "uswap-test:*", &deleted);
		if (ret || deleted != NR_KEYS / 2) {
			fprintf(stderr, "FAIL: delete by pattern: %s, %llu "
				"deleted, want %u\n", strerror(-ret),
				(unsigned long long)deleted, NR_KEYS / 2);
			return 1;
		}
		all(rs, RS_GET, bufs, keys, results);
		for (k = 0; k < NR_KEYS; k++)
			if (results[k] != -ENOENT)
				return fail("GET after DEL: not ENOENT",
					    results[k]);
		printf("ok: wrong size, delete, delete by pattern\n");
	} else {
		all(rs, RS_DEL, bufs, keys, NULL);
	}
	for (k = 0; k < NR_KEYS; k++)
		free(bufs[k]);
	redis_store_close(rs);
	return 0;
}
