// SPDX-License-Identifier: MIT
/*
 * compress.c - the compressor front end of the compressed pool: what the
 * kernel's zswap.c gets from crypto_acomp, over liblz4, libzstd and zlib.
 *
 * The one hard rule is that compressing and decompressing never call
 * malloc: they run on the fault path and in the reclaimer, inside a process
 * whose threads may hold the allocator's locks.  So a context is a single
 * prim_alloc() mapping, made up front, that holds every byte the library
 * will ever want:
 *
 *   lz4      the state of LZ4_compress_fast_extState();
 *   zstd     a static CCtx and DCtx (ZSTD_initStatic*), sized for the
 *            largest table any input of up to max_len bytes needs at the
 *            chosen level; a static context cannot allocate at all;
 *   deflate  a deflate and an inflate stream whose zalloc bumps through
 *            an arena in the mapping; zlib allocates its state and
 *            windows once (inflate's window on first use) and keeps them
 *            across deflateReset/inflateReset, and zfree does nothing:
 *            the arena goes away with the context.
 *
 * The zstd static-context calls are in zstd's "static linking only"
 * section; they are exported by libzstd.so and have kept their meaning
 * since zstd 1.3.
 *
 * Formats: LZ4 blocks, zstd frames without checksum, raw deflate.  None
 * detects every corruption (see compress.h): callers checksum.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#define ZLIB_CONST
#include <zlib.h>

#include "compress.h"
#include "base.h"
#include "prim.h"

#define LZ4_ACCEL_MAX		65537	/* LZ4's own ceiling */
#define DEFLATE_WBITS		15	/* raw deflate: passed negated */
#define DEFLATE_MEMLEVEL	8
#define CTX_ALIGN		64

struct comp_ctx {
	enum comp_alg alg;
	int level;
	size_t max_len;
	size_t map_len;		/* the context is one mapping of this size */
	union {
		void *lz4_state;	/* LZ4_sizeofState() bytes */
		struct {
			ZSTD_CCtx *cctx;
			ZSTD_DCtx *dctx;
		} zstd;
		struct {
			z_stream def, inf;
			char *next, *end;	/* the zalloc arena */
		} zlib;
	};
};

/* --- specs ------------------------------------------------------------- */

static const struct comp_desc {
	const char *name;
	const char *param;	/* what the number after ':' is */
	int def;
} comp_descs[] = {
	[COMP_LZ4] = { "lz4", "acceleration", 1 },
	[COMP_ZSTD] = { "zstd", "level", 1 },
	[COMP_DEFLATE] = { "deflate", "level", 1 },
};

#define SPEC_EXPECTED	"lz4[:ACCEL], zstd[:LEVEL] or deflate[:LEVEL]"

const char *comp_name(enum comp_alg alg)
{
	return (unsigned)alg < ARRAY_SIZE(comp_descs) ?
	       comp_descs[alg].name : "unknown";
}

static bool comp_level_valid(enum comp_alg alg, long level)
{
	switch (alg) {
	case COMP_LZ4:
		return level >= 1 && level <= LZ4_ACCEL_MAX;
	case COMP_ZSTD:
		return level != 0 && level >= ZSTD_minCLevel() &&
		       level <= ZSTD_maxCLevel();
	case COMP_DEFLATE:
		return level >= 1 && level <= 9;
	}
	return false;
}

/* "(expected ...)" for alg's number. */
static void comp_level_range(enum comp_alg alg, char *buf, size_t len)
{
	switch (alg) {
	case COMP_LZ4:
		snprintf(buf, len, "1..%d", LZ4_ACCEL_MAX);
		break;
	case COMP_ZSTD:
		snprintf(buf, len, "1..%d or -1..%d", ZSTD_maxCLevel(),
			 ZSTD_minCLevel());
		break;
	case COMP_DEFLATE:
		snprintf(buf, len, "1..9");
		break;
	}
}

/* A decimal number with an optional '-': no '+', no blanks, no junk. */
static bool parse_int(const char *s, long *v)
{
	const char *d = *s == '-' ? s + 1 : s;
	char *end;

	if (*d < '0' || *d > '9')
		return false;
	errno = 0;
	*v = strtol(s, &end, 10);
	if (*end)
		return false;
	if (errno == ERANGE)
		*v = *v < 0 ? LONG_MIN : LONG_MAX;	/* out of any range */
	return true;
}

static int parse_spec(const char *spec, enum comp_alg *alg, int *level,
		      char *err, size_t errlen)
{
	const char *colon, *num;
	char range[48];
	size_t name_len;
	unsigned a;
	long v;

	if (!errlen)
		err = NULL;
	if (!spec || !*spec) {
		if (err)
			snprintf(err, errlen, "empty compressor (expected "
				 SPEC_EXPECTED ")");
		return -EINVAL;
	}
	colon = strchr(spec, ':');
	name_len = colon ? (size_t)(colon - spec) : strlen(spec);
	for (a = 0; a < ARRAY_SIZE(comp_descs); a++)
		if (strlen(comp_descs[a].name) == name_len &&
		    !memcmp(spec, comp_descs[a].name, name_len))
			break;
	if (a == ARRAY_SIZE(comp_descs)) {
		if (err)
			snprintf(err, errlen, "%s: unknown compressor \"%.*s\" "
				 "(expected " SPEC_EXPECTED ")", spec,
				 (int)name_len, spec);
		return -EINVAL;
	}
	if (!colon) {
		*alg = (enum comp_alg)a;
		*level = comp_descs[a].def;
		return 0;
	}

	num = colon + 1;
	comp_level_range((enum comp_alg)a, range, sizeof(range));
	if (!*num) {
		if (err)
			snprintf(err, errlen, "%s: missing %s after ':' "
				 "(expected %s)", spec, comp_descs[a].param,
				 range);
		return -EINVAL;
	}
	if (!parse_int(num, &v)) {
		if (err)
			snprintf(err, errlen, "%s: %s \"%s\" is not a number "
				 "(expected %s)", spec, comp_descs[a].param,
				 num, range);
		return -EINVAL;
	}
	if (!comp_level_valid((enum comp_alg)a, v)) {
		if (err)
			snprintf(err, errlen, "%s: %s %s is out of range "
				 "(expected %s)", spec, comp_descs[a].param,
				 num, range);
		return -EINVAL;
	}
	*alg = (enum comp_alg)a;
	*level = (int)v;
	return 0;
}

int comp_parse(const char *spec, enum comp_alg *alg, int *level, char *err,
	       size_t errlen)
{
	int ret = parse_spec(spec, alg, level, err, errlen);
	char *c;

	/* The message quotes the spec: keep it on one line whatever it holds. */
	if (ret && err && errlen)
		for (c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	return ret;
}

/* --- contexts ---------------------------------------------------------- */

static size_t ctx_round(size_t n)
{
	return (n + CTX_ALIGN - 1) & ~(size_t)(CTX_ALIGN - 1);
}

/*
 * The CCtx workspace that every input of up to max_len bytes fits in.
 * zstd picks its parameters by input size, and some levels use more
 * memory for small inputs than for large ones, so take the largest over
 * the sizes where the choice can change (powers of two, and max_len).
 */
static size_t zstd_cctx_size(int level, size_t max_len)
{
	size_t best = 0, n = 1024;

	for (;;) {
		size_t s = MIN(n, max_len);
		ZSTD_compressionParameters cp = ZSTD_getCParams(level, s, 0);

		best = MAX(best, ZSTD_estimateCCtxSize_usingCParams(cp));
		if (s == max_len)
			return best;
		n *= 2;
	}
}

/*
 * zlib's peak: deflate's state plus its window, prev, head and pending
 * buffers (zconf.h gives the last four as 2^(wbits+2) + 2^(memlevel+9)),
 * inflate's state plus a 2^wbits window; each with rounding slack.
 */
static size_t zlib_arena_size(void)
{
	return ((size_t)1 << (DEFLATE_WBITS + 2)) +
	       ((size_t)1 << (DEFLATE_MEMLEVEL + 9)) +
	       ((size_t)1 << DEFLATE_WBITS) + 64 * 1024;
}

static voidpf zlib_alloc(voidpf opaque, uInt items, uInt size)
{
	struct comp_ctx *ctx = opaque;
	size_t n = ctx_round((size_t)items * size);
	char *p = ctx->zlib.next;

	if (n > (size_t)(ctx->zlib.end - p))
		return Z_NULL;
	ctx->zlib.next = p + n;
	return p;
}

/* Arena memory is returned when the context is unmapped. */
static void zlib_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	(void)p;
}

static size_t ctx_size(enum comp_alg alg, int level, size_t max_len)
{
	size_t n = ctx_round(sizeof(struct comp_ctx));

	switch (alg) {
	case COMP_LZ4:
		return n + ctx_round((size_t)LZ4_sizeofState());
	case COMP_ZSTD:
		return n + ctx_round(zstd_cctx_size(level, max_len)) +
		       ctx_round(ZSTD_estimateDCtxSize());
	case COMP_DEFLATE:
		return n + zlib_arena_size();
	}
	return 0;
}

/* Set up the library state in the mapping after the struct. */
static int ctx_init(struct comp_ctx *ctx, char *ws)
{
	size_t cctx_len;

	switch (ctx->alg) {
	case COMP_LZ4:
		ctx->lz4_state = ws;
		return 0;
	case COMP_ZSTD:
		cctx_len = ctx_round(zstd_cctx_size(ctx->level, ctx->max_len));
		ctx->zstd.cctx = ZSTD_initStaticCCtx(ws, cctx_len);
		ctx->zstd.dctx = ZSTD_initStaticDCtx(ws + cctx_len,
						     ZSTD_estimateDCtxSize());
		return ctx->zstd.cctx && ctx->zstd.dctx ? 0 : -ENOMEM;
	case COMP_DEFLATE:
		ctx->zlib.next = ws;
		ctx->zlib.end = (char *)ctx + ctx->map_len;
		ctx->zlib.def.zalloc = ctx->zlib.inf.zalloc = zlib_alloc;
		ctx->zlib.def.zfree = ctx->zlib.inf.zfree = zlib_free;
		ctx->zlib.def.opaque = ctx->zlib.inf.opaque = ctx;
		/* On failure there is nothing to end: unmapping frees all. */
		if (deflateInit2(&ctx->zlib.def, ctx->level, Z_DEFLATED,
				 -DEFLATE_WBITS, DEFLATE_MEMLEVEL,
				 Z_DEFAULT_STRATEGY) != Z_OK ||
		    inflateInit2(&ctx->zlib.inf, -DEFLATE_WBITS) != Z_OK)
			return -ENOMEM;
		return 0;
	}
	return -EINVAL;
}

struct comp_ctx *comp_ctx_create(enum comp_alg alg, int level, size_t max_len)
{
	struct comp_ctx *ctx;
	size_t len;

	if ((unsigned)alg >= ARRAY_SIZE(comp_descs) ||
	    !comp_level_valid(alg, level) || !max_len ||
	    max_len > LZ4_MAX_INPUT_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	len = ctx_size(alg, level, max_len);
	ctx = prim_alloc(len);
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->alg = alg;
	ctx->level = level;
	ctx->max_len = max_len;
	ctx->map_len = len;
	if (ctx_init(ctx, (char *)ctx + ctx_round(sizeof(*ctx)))) {
		prim_free(ctx, len);
		errno = ENOMEM;
		return NULL;
	}
	return ctx;
}

void comp_ctx_destroy(struct comp_ctx *ctx)
{
	if (!ctx)
		return;
	/* zstd's static contexts and zlib's arena live in the mapping. */
	if (ctx->alg == COMP_DEFLATE) {
		deflateEnd(&ctx->zlib.def);
		inflateEnd(&ctx->zlib.inf);
	}
	prim_free(ctx, ctx->map_len);
}

/* --- compress ---------------------------------------------------------- */

/*
 * LZ4_compress_fast_extState() clears the 16 KiB state each time.
 * Measured on 4 KiB and 64 KiB blocks it is still 10-25% faster than
 * LZ4_resetStream_fast() + LZ4_compress_fast_continue(), which must use
 * the wider 32-bit hash table.
 */
static ssize_t lz4_compress(struct comp_ctx *ctx, const void *src, size_t len,
			    void *dst, size_t cap)
{
	int n = LZ4_compress_fast_extState(ctx->lz4_state, src, dst, (int)len,
					   (int)MIN(cap, (size_t)INT_MAX),
					   ctx->level);

	return n > 0 ? n : -ENOSPC;
}

static ssize_t zstd_compress(struct comp_ctx *ctx, const void *src, size_t len,
			     void *dst, size_t cap)
{
	size_t n = ZSTD_compressCCtx(ctx->zstd.cctx, dst, cap, src, len,
				     ctx->level);

	if (!ZSTD_isError(n))
		return (ssize_t)n;
	if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
		return -ENOSPC;
	return -EIO;
}

static ssize_t deflate_compress(struct comp_ctx *ctx, const void *src,
				size_t len, void *dst, size_t cap)
{
	z_stream *s = &ctx->zlib.def;
	uInt avail = (uInt)MIN(cap, (size_t)UINT_MAX);
	int ret;

	s->next_in = src;
	s->avail_in = (uInt)len;
	s->next_out = dst;
	s->avail_out = avail;
	ret = deflate(s, Z_FINISH);
	deflateReset(s);
	if (ret == Z_STREAM_END)
		return (ssize_t)(avail - s->avail_out);
	/* Z_OK or Z_BUF_ERROR: the output filled up before the end. */
	return ret == Z_OK || ret == Z_BUF_ERROR ? -ENOSPC : -EIO;
}

ssize_t comp_compress(struct comp_ctx *ctx, const void *src, size_t len,
		      void *dst, size_t cap)
{
	assert(len > 0 && len <= ctx->max_len);
	if (unlikely(!len || len > ctx->max_len))
		return -EINVAL;
	switch (ctx->alg) {
	case COMP_LZ4:
		return lz4_compress(ctx, src, len, dst, cap);
	case COMP_ZSTD:
		return zstd_compress(ctx, src, len, dst, cap);
	case COMP_DEFLATE:
		return deflate_compress(ctx, src, len, dst, cap);
	}
	return -EINVAL;
}

/* --- decompress -------------------------------------------------------- */

static int inflate_exact(struct comp_ctx *ctx, const void *src, size_t clen,
			 void *dst, size_t len)
{
	z_stream *s = &ctx->zlib.inf;
	int ret;

	s->next_in = src;
	s->avail_in = (uInt)clen;
	s->next_out = dst;
	s->avail_out = (uInt)len;
	ret = inflate(s, Z_FINISH);
	/* Exactly len bytes out, and nothing left over after the last block. */
	if (ret == Z_STREAM_END && !s->avail_out && !s->avail_in)
		ret = 0;
	else
		ret = -EBADMSG;
	inflateReset(s);
	return ret;
}

int comp_decompress(struct comp_ctx *ctx, const void *src, size_t clen,
		    void *dst, size_t len)
{
	size_t n;

	if (unlikely(!clen || clen > INT_MAX || !len || len > INT_MAX))
		return -EBADMSG;
	switch (ctx->alg) {
	case COMP_LZ4:
		return LZ4_decompress_safe(src, dst, (int)clen, (int)len) ==
		       (int)len ? 0 : -EBADMSG;
	case COMP_ZSTD:
		n = ZSTD_decompressDCtx(ctx->zstd.dctx, dst, len, src, clen);
		return !ZSTD_isError(n) && n == len ? 0 : -EBADMSG;
	case COMP_DEFLATE:
		return inflate_exact(ctx, src, clen, dst, len);
	}
	return -EBADMSG;
}

/* --- same-filled pages ------------------------------------------------- */

/* Pages hold anything: read them as words without breaking aliasing rules. */
typedef uint64_t __attribute__((may_alias)) mem_word_t;

bool mem_same_filled(const void *buf, size_t len, uint64_t *value)
{
	const mem_word_t *w = buf;
	const size_t n = len / sizeof(*w);
	const uint64_t v = w[0];
	size_t i = 1;

	assert(len && !(len % sizeof(*w)) && !((uintptr_t)buf % sizeof(*w)));
	/* Most pages that are not same-filled differ at the end already. */
	if (w[n - 1] != v)
		return false;
	/* Four words a step, so the compiler can keep them in one vector. */
	for (; i + 4 <= n; i += 4)
		if ((w[i] ^ v) | (w[i + 1] ^ v) | (w[i + 2] ^ v) |
		    (w[i + 3] ^ v))
			return false;
	for (; i < n; i++)
		if (w[i] != v)
			return false;
	*value = v;
	return true;
}

void mem_fill_word(void *buf, size_t len, uint64_t value)
{
	mem_word_t *w = buf;
	const size_t n = len / sizeof(*w);

	assert(!(len % sizeof(*w)) && !((uintptr_t)buf % sizeof(*w)));
	if (!value) {
		memset(buf, 0, len);
		return;
	}
	for (size_t i = 0; i < n; i++)
		w[i] = value;
}
