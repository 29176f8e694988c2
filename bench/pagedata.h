/* SPDX-License-Identifier: MIT */
/*
 * pagedata.h - realistic, verifiable page contents for the benchmarks.
 *
 * Every compressed tier's speed depends on what the pages hold, so the
 * benchmarks never write all-zero memory unless asked.  A page's contents
 * are a function of its index and a generation number (the pass that wrote
 * it): page_fill() writes them, and the same call rebuilds them to check a
 * page read back.  "mixed" data is a quarter each, chosen per page by a
 * hash, of:
 *
 *   zero     all zero (the kernel and uswap keep these as a flag, no I/O)
 *   text     a 4 KiB window into generated English-like text, stamped
 *            "[page <index> gen <gen>]"; lz4 ratio about 1.6
 *   struct   64-byte records: ids, small enums, timestamps, doubles,
 *            pointer-like values, zero padding; lz4 ratio about 1.9
 *   random   incompressible
 *
 * which lz4 compresses about 1.85 to 1 page by page.  Call
 * text_templates_init() once before page_fill().
 *
 * Everything is static: include this header from one benchmark file.
 */
#ifndef USWAP_BENCH_PAGEDATA_H
#define USWAP_BENCH_PAGEDATA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define UM_PAGE		4096UL
#define UM_WORDS	(UM_PAGE / sizeof(uint64_t))

/* Text-like pages are 4 KiB windows into a few generated text templates. */
#define TEXT_TEMPLATES	16
#define TEXT_TEMPLATE	(2 * UM_PAGE)

enum um_data { DATA_MIXED, DATA_TEXT, DATA_RANDOM, DATA_ZERO };
enum um_kind { KIND_ZERO, KIND_TEXT, KIND_STRUCT, KIND_RANDOM };

static const char *const data_names[] = { "mixed", "text", "random", "zero" };
static const char *const kind_names[] = { "zero", "text", "struct", "random" };

static uint8_t text_templates[TEXT_TEMPLATES][TEXT_TEMPLATE];

static const char *const text_words[] = {
	"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there",
	"been", "if", "more", "when", "will", "would", "who", "so", "no",
	"memory", "page", "swap", "kernel", "process", "thread", "device",
	"compressed", "folio", "region", "budget", "reclaim", "fault", "slot",
	"request", "server", "client", "error", "value", "return", "struct",
	"buffer", "length", "count", "index", "timeout", "config", "status",
	"between", "through", "during", "without", "against", "because",
	"however", "although", "system", "number", "people", "time", "year",
	"world", "government", "information", "development", "university",
};

/* splitmix64's finaliser: a good 64-bit mix of x. */
static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* xorshift64*: the per-page and per-thread generator; state never zero. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static inline uint64_t rng_seed(uint64_t a, uint64_t b)
{
	uint64_t s = mix64(a ^ mix64(b + 0x5851f42d4c957f2dULL));

	return s ? s : 1;
}

/* A uniform index in [0, n), without modulo bias worth the name. */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

/* The hash that decides a page's kind and contents, given its generation. */
static inline uint64_t page_hash(uint64_t idx, unsigned gen)
{
	return rng_seed(idx, gen);
}

static inline enum um_kind page_kind(enum um_data data, uint64_t hash)
{
	switch (data) {
	case DATA_TEXT:
		return KIND_TEXT;
	case DATA_RANDOM:
		return KIND_RANDOM;
	case DATA_ZERO:
		return KIND_ZERO;
	case DATA_MIXED:
		break;
	}
	return (enum um_kind)(hash >> 62);
}

/*
 * Build the text templates: sentences of common words with numbers, commas
 * and line breaks, from a fixed seed (the same on every run).
 */
static inline void text_templates_init(void)
{
	uint64_t s = rng_seed(0x7e47, 1);
	const unsigned nwords = sizeof(text_words) / sizeof(text_words[0]);

	for (unsigned t = 0; t < TEXT_TEMPLATES; t++) {
		uint8_t *p = text_templates[t];
		size_t len = 0, col = 0;
		bool cap = true;

		while (len < TEXT_TEMPLATE) {
			char tok[32];
			uint64_t r = rng_next(&s);
			int n;

			if ((r & 31) == 0)
				n = snprintf(tok, sizeof(tok), "%u",
					     (unsigned)(r >> 40) % 10000);
			else
				n = snprintf(tok, sizeof(tok), "%s",
					     text_words[(r >> 8) % nwords]);
			if (cap && tok[0] >= 'a' && tok[0] <= 'z')
				tok[0] -= 'a' - 'A';
			cap = false;
			if ((r >> 20) % 12 == 0) {
				tok[n++] = '.';
				cap = true;
			} else if ((r >> 20) % 9 == 0) {
				tok[n++] = ',';
			}
			col += (size_t)n + 1;
			tok[n++] = col > 72 ? '\n' : ' ';
			if (col > 72)
				col = 0;
			for (int i = 0; i < n && len < TEXT_TEMPLATE; i++)
				p[len++] = (uint8_t)tok[i];
		}
	}
}

/* Write "[page %016x gen %04x]" (32 bytes) at p. */
static inline void text_stamp(uint8_t *p, uint64_t idx, unsigned gen)
{
	static const char hex[] = "0123456789abcdef";
	char h[33] = "[page ................ gen ....]";

	for (int i = 0; i < 16; i++)
		h[6 + i] = hex[(idx >> (60 - 4 * i)) & 15];
	for (int i = 0; i < 4; i++)
		h[27 + i] = hex[(gen >> (12 - 4 * i)) & 15];
	memcpy(p, h, 32);
}

/* A structured binary record, as an application's array of structs. */
struct um_record {
	uint64_t id;
	uint32_t type;
	uint32_t flags;
	uint64_t timestamp;
	double value;
	uint64_t ptr;
	uint32_t count;
	uint16_t a, b;
	uint64_t reserved[2];
};

_Static_assert(sizeof(struct um_record) == 64, "record is 64 bytes");

static inline void fill_struct(uint8_t *p, uint64_t idx, uint64_t hash)
{
	const unsigned nrec = UM_PAGE / sizeof(struct um_record);
	uint64_t s = hash | 1;
	uint64_t ts = 1700000000000000ULL + idx * 4096 + (hash & 0xfff);

	for (unsigned i = 0; i < nrec; i++) {
		uint64_t r = rng_next(&s);
		struct um_record rec = {
			.id = idx * nrec + i,
			.type = (uint32_t)(r & 7),
			.flags = (uint32_t)((r >> 3) & 3),
			.timestamp = ts,
			.value = (double)((r >> 40) & 0xffff) / 100.0,
			.ptr = 0x00007f0000000000ULL +
			       ((idx * nrec + (r >> 16 & 0xff)) << 6),
			.count = (uint32_t)((r >> 24) & 0x3ff),
			.a = (uint16_t)((r >> 34) & 0xf),
			.b = (uint16_t)(i & 0xf),
		};

		ts += (r >> 48) & 0xff;
		memcpy(p + i * sizeof(rec), &rec, sizeof(rec));
	}
}

static inline void fill_random(uint8_t *p, uint64_t hash)
{
	uint64_t s = hash | 1;
	uint64_t w[UM_WORDS];

	for (unsigned i = 0; i < UM_WORDS; i++)
		w[i] = rng_next(&s);
	memcpy(p, w, sizeof(w));
}

/* Write generation gen of data page idx into the 4 KiB at p. */
static inline void page_fill(uint8_t *p, enum um_data data, uint64_t idx,
			     unsigned gen)
{
	const uint64_t hash = page_hash(idx, gen);
	const uint8_t *tmpl;

	switch (page_kind(data, hash)) {
	case KIND_ZERO:
		memset(p, 0, UM_PAGE);
		break;
	case KIND_TEXT:
		tmpl = text_templates[(hash >> 12) % TEXT_TEMPLATES];
		memcpy(p, tmpl + (hash & (UM_PAGE - 1)), UM_PAGE);
		text_stamp(p, idx, gen);
		break;
	case KIND_STRUCT:
		fill_struct(p, idx, hash);
		break;
	case KIND_RANDOM:
		fill_random(p, hash);
		break;
	}
}

/* Read every word of the page at p; return their sum. */
static inline uint64_t page_read(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)(const void *)p;
	uint64_t sum = 0;

	for (unsigned i = 0; i < UM_WORDS; i++)
		sum += w[i];
	return sum;
}

#endif /* USWAP_BENCH_PAGEDATA_H */
