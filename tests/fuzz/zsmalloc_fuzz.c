// SPDX-License-Identifier: MIT
/*
 * zsmalloc_fuzz.c - the compressed pool's allocator (src/zswap/zsmalloc.c)
 * against a reference model, driven by fuzz input.
 *
 * The input is a sequence of operations on a 4 MiB pool holding at most
 * MAX_LIVE objects; each operation is one byte, its arguments the bytes
 * that follow (missing bytes read as 0):
 *
 *	op & 7	0, 1	allocate; (op >> 3) & 3 picks the size range (tiny,
 *			up to a page, nearly a page, chained up to
 *			ZS_MAX_OBJECT), two bytes the size within it
 *		2	free object [byte]
 *		3	read object [byte] and compare
 *		4	rewrite object [byte] with new contents
 *		5	read a prefix of object [byte] ([byte] / 256 of it)
 *		6	free every [byte % 8 + 2]-th object (sparse spans)
 *		7	zs_compact, then zs_validate and read everything
 *
 * After every operation the counters must match the model and the deltas
 * passed to account() must add up to pool_bytes.  An allocation may fail
 * only when the pool could not have made room for it.  Any mismatch
 * abort()s.  Built with tests/fuzz/replay.c by make, for libFuzzer by
 * make fuzz.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zsmalloc.h"
#include "fuzzlib.h"

#define POOL_BYTES	(4u << 20)
#define MAX_LIVE	64
/* Memory a new object may need beyond its own pages: new spans for its
 * last chunk and its index, a handle table page, page metadata. */
#define ALLOC_SLACK	(256u << 10)

struct obj {
	uint32_t h;
	uint32_t size;
	uint32_t seed;
};

struct fuzz {
	const uint8_t *p, *end;
	struct zs_pool *pool;
	_Atomic long charged;
	struct obj objs[MAX_LIVE];
	unsigned n;
	uint32_t next_seed;
	unsigned char buf[ZS_MAX_OBJECT];
	unsigned char table[2 * ZS_MAX_OBJECT];
};

static struct fuzz fz;


static unsigned byte(void)
{
	return fz.p < fz.end ? *fz.p++ : 0;
}

static unsigned word(void)
{
	return byte() | byte() << 8;
}

static void account(void *arg, long delta)
{
	atomic_fetch_add((_Atomic long *)arg, delta);
}

/*
 * Contents: a window of a random table at an offset that depends on the
 * object's seed (memcpy-fast, distinct for every seed below ~500).
 */
static const unsigned char *pattern(uint32_t seed)
{
	static unsigned char *table;

	if (!table) {
		uint64_t s = 0x9E3779B97F4A7C15ull;
		size_t i;

		table = fz.table;
		for (i = 0; i < sizeof(fz.table); i += 8) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			memcpy(table + i, &s, 8);
		}
	}
	return table + (size_t)seed * 4099 % ZS_MAX_OBJECT;
}

static void obj_write(const struct obj *o)
{
	zs_write(fz.pool, o->h, pattern(o->seed), o->size);
}

static void obj_check(const struct obj *o, size_t len)
{
	CHECK(zs_size(fz.pool, o->h) == o->size);
	zs_read(fz.pool, o->h, fz.buf, len);
	CHECK(!memcmp(fz.buf, pattern(o->seed), len));
}

static void check_counters(void)
{
	uint64_t bytes = 0;
	struct zs_stats st;
	unsigned i;

	for (i = 0; i < fz.n; i++)
		bytes += fz.objs[i].size;
	zs_get_stats(fz.pool, &st);
	CHECK(st.objects == fz.n);
	CHECK(st.obj_bytes == bytes);
	CHECK(st.pool_bytes <= POOL_BYTES);
	CHECK((uint64_t)atomic_load(&fz.charged) * 4096 == st.pool_bytes);
}

static void check_all(void)
{
	unsigned i;

	CHECK(zs_validate(fz.pool) == NULL);
	for (i = 0; i < fz.n; i++)
		obj_check(&fz.objs[i], fz.objs[i].size);
}

static void obj_free(unsigned i)
{
	zs_free(fz.pool, fz.objs[i].h);
	fz.objs[i] = fz.objs[--fz.n];
}

static size_t alloc_size(unsigned op)
{
	unsigned w = word();

	switch ((op >> 3) & 3) {
	case 0:
		return 1 + w % 64;
	case 1:
		return 1 + w % 4096;
	case 2:
		return 4096 - w % 40;
	default:
		/* Mostly up to 64 KiB, sometimes up to the largest. */
		if (op & 0x20)
			return 4097 + (size_t)w * 32 % (ZS_MAX_OBJECT - 4096);
		return 4097 + w % 61440;
	}
}

static void op_alloc(unsigned op)
{
	size_t size = alloc_size(op);
	struct zs_stats before;
	struct obj *o;
	unsigned i;

	if (fz.n == MAX_LIVE)
		obj_free(0);
	zs_get_stats(fz.pool, &before);
	o = &fz.objs[fz.n];
	o->h = zs_malloc(fz.pool, size);
	if (!o->h) {
		/* Only when even fresh pages for it could not be had. */
		CHECK(before.pool_bytes + (size + 4095) / 4096 * 4096 +
		      ALLOC_SLACK > POOL_BYTES);
		CHECK(zs_validate(fz.pool) == NULL);
		return;
	}
	for (i = 0; i < fz.n; i++)
		CHECK(fz.objs[i].h != o->h);
	o->size = (uint32_t)size;
	o->seed = fz.next_seed++;
	fz.n++;
	obj_write(o);
}

static void op_compact(void)
{
	struct zs_stats before, after;
	uint64_t released;

	zs_get_stats(fz.pool, &before);
	released = zs_compact(fz.pool);
	zs_get_stats(fz.pool, &after);
	CHECK(before.pool_bytes - after.pool_bytes == released);
	CHECK(after.pages_compacted - before.pages_compacted ==
	      released / 4096);
	check_all();
}

static void step(void)
{
	unsigned op = byte(), i;

	switch (op & 7) {
	case 0:
	case 1:
		op_alloc(op);
		break;
	case 2:
		i = byte();
		if (fz.n)
			obj_free(i % fz.n);
		break;
	case 3:
	case 5:
		i = byte();
		if (fz.n) {
			const struct obj *o = &fz.objs[i % fz.n];
			size_t len = o->size;

			if ((op & 7) == 5)
				len = len * byte() / 256;
			obj_check(o, len);
		}
		break;
	case 4:
		i = byte();
		if (fz.n) {
			fz.objs[i % fz.n].seed = fz.next_seed++;
			obj_write(&fz.objs[i % fz.n]);
		}
		break;
	case 6:
		i = byte() % 8 + 2;
		for (unsigned j = fz.n; j-- > 0;)
			if (j % i == 0)
				obj_free(j);
		break;
	case 7:
		op_compact();
		break;
	}
	check_counters();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz.p = data;
	fz.end = data + size;
	fz.n = 0;
	fz.next_seed = 1;
	atomic_store(&fz.charged, 0);
	fz.pool = zs_create(POOL_BYTES, account, &fz.charged);
	CHECK(fz.pool);
	while (fz.p < fz.end)
		step();
	check_all();
	while (fz.n)
		obj_free(fz.n - 1);
	op_compact();
	CHECK(atomic_load(&fz.charged) * 4096 < (long)(1u << 20));
	zs_destroy(fz.pool);
	CHECK(atomic_load(&fz.charged) == 0);
	return 0;
}
