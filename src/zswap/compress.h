/* SPDX-License-Identifier: MIT */
/*
 * compress.h - the compressor front end of the compressed pool (the
 * kernel's zswap.c talks to crypto_acomp; uswap talks to comp_ctx), and the
 * same-filled page test that lets zswap keep a page as one word.
 *
 * Three compressors, from the distribution's libraries:
 *
 *   lz4[:ACCEL]      LZ4 blocks; ACCEL 1..65537 trades ratio for speed (1)
 *   zstd[:LEVEL]     zstd frames; LEVEL 1..max or a negative fast level (1)
 *   deflate[:LEVEL]  raw deflate (no zlib header); LEVEL 1..9 (1)
 *
 * None of them carries a checksum of the data (zstd frames are made without
 * one): a corrupt buffer can decompress "successfully" into wrong bytes, so
 * whoever stores compressed data keeps a crc32c of it (crc32c.h).
 *
 * A context belongs to one thread at a time.  All its memory is mapped by
 * comp_ctx_create(); comp_compress() and comp_decompress() never allocate,
 * so they may run on the fault path inside someone else's process.
 */
#ifndef USWAP_COMPRESS_H
#define USWAP_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum comp_alg { COMP_LZ4, COMP_ZSTD, COMP_DEFLATE };

struct comp_ctx;

/*
 * Parse a compressor spec ("lz4", "lz4:ACCEL", "zstd", "zstd:LEVEL",
 * "deflate", "deflate:LEVEL").  Returns 0 and sets *alg and *level (the
 * acceleration for lz4), or -EINVAL with one line in err (if errlen > 0)
 * naming the input and what was expected; *alg and *level are then left
 * alone.
 */
int comp_parse(const char *spec, enum comp_alg *alg, int *level, char *err,
	       size_t errlen);
const char *comp_name(enum comp_alg alg);

/*
 * Map a context for inputs of up to max_len bytes (a folio: up to 2 MiB).
 * Returns NULL with errno set (EINVAL for a level comp_parse() would refuse
 * or a max_len of 0, ENOMEM).  Not for the fault path: create contexts up
 * front, one per thread.
 */
struct comp_ctx *comp_ctx_create(enum comp_alg alg, int level, size_t max_len);
void comp_ctx_destroy(struct comp_ctx *ctx);

/*
 * Compress len bytes (1..max_len) of src into dst.  Returns the compressed
 * length, or -ENOSPC when it would not fit in cap bytes: the caller passes
 * its incompressibility threshold as cap.  Never writes at or past
 * dst + cap.  Any other negative value is a bug (a library error uswap did
 * not expect); treat it as -ENOSPC.
 */
ssize_t comp_compress(struct comp_ctx *ctx, const void *src, size_t len,
		      void *dst, size_t cap);

/*
 * Decompress clen bytes of src into exactly len bytes at dst.  Returns 0,
 * or -EBADMSG when src is corrupt or does not decode to exactly len bytes.
 * Never crashes, reads past src + clen or writes past dst + len, whatever
 * src holds; dst's contents are undefined after -EBADMSG.
 */
int comp_decompress(struct comp_ctx *ctx, const void *src, size_t clen,
		    void *dst, size_t len);

/*
 * True when every 8-byte word of buf equals the first; *value gets that
 * word.  buf is 8-byte aligned, len a non-zero multiple of 8.  Stops at the
 * first word that differs: it runs on every page reclaim stores.
 */
bool mem_same_filled(const void *buf, size_t len, uint64_t *value);
/* Fill len bytes (a multiple of 8) of the 8-byte aligned buf with value. */
void mem_fill_word(void *buf, size_t len, uint64_t value);

#endif /* USWAP_COMPRESS_H */
