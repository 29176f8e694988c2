// SPDX-License-Identifier: MIT
/*
 * swapspec_fuzz.c - feed bytes to swap_spec_parse() and swaptab_parse_text()
 * (swapspec.c), then build the per-node lists from what parsed.
 *
 * Never crashes, and aborts when a result breaks what swapdev.h documents:
 * a parsed spec has a non-empty path shorter than 256 bytes, without ',',
 * control characters or a space at either end; prio AUTO or 0..32767; size
 * 0 or a multiple of 2M in [2M, 1T]; node -1 or 0..1023; and it prints back
 * to a spec that parses to the same.  A failure writes a message and leaves
 * the output alone.  A uswaptab gives 1..max devices with distinct paths.
 * The lists always hand out a device of the highest priority on the asked
 * node's list, or -ENOSPC when no device has room.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swapdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s\n", __FILE__,	\
				__LINE__, #cond);			\
			abort();					\
		}							\
	} while (0)

static void check_spec(const struct swap_spec *sp)
{
	size_t len = strnlen(sp->path, sizeof(sp->path));

	REQUIRE(len > 0 && len < sizeof(sp->path));
	REQUIRE(!strchr(sp->path, ','));
	for (size_t i = 0; i < len; i++)
		REQUIRE((unsigned char)sp->path[i] >= 0x20 && sp->path[i] != 0x7f);
	REQUIRE(sp->path[0] != ' ' && sp->path[len - 1] != ' ');
	REQUIRE(sp->prio == SWAP_PRIO_AUTO ||
		(sp->prio >= 0 && sp->prio <= SWAP_PRIO_MAX));
	REQUIRE(sp->size == 0 ||
		(sp->size >= SWAP_SPEC_MIN_SIZE && sp->size <= SWAP_SPEC_MAX_SIZE &&
		 sp->size % SWAP_SPEC_MIN_SIZE == 0));
	REQUIRE(sp->node == -1 || (sp->node >= 0 && sp->node < (int)SWAP_MAX_NODES));
}

static void check_err(const char *err, size_t len)
{
	REQUIRE(memchr(err, 0, len));
	REQUIRE(err[0]);
}

/* Print a parsed spec back; it must parse to the same. */
static void check_round_trip(const struct swap_spec *sp)
{
	char text[512], err[256];
	struct swap_spec again;
	int n;

	n = snprintf(text, sizeof(text), "%s", sp->path);
	if (sp->prio != SWAP_PRIO_AUTO)
		n += snprintf(text + n, sizeof(text) - (size_t)n, ",prio=%d", sp->prio);
	if (sp->size)
		n += snprintf(text + n, sizeof(text) - (size_t)n, ",size=%lluM",
			      (unsigned long long)(sp->size >> 20));
	if (sp->node >= 0)
		n += snprintf(text + n, sizeof(text) - (size_t)n, ",node=%d", sp->node);
	snprintf(text + n, sizeof(text) - (size_t)n, "%s%s",
		 sp->discard ? ",discard" : "", sp->direct ? ",direct" : "");
	REQUIRE(swap_spec_parse(text, &again, err, sizeof(err)) == 0);
	REQUIRE(!strcmp(again.path, sp->path) && again.prio == sp->prio &&
		again.size == sp->size && again.node == sp->node &&
		again.discard == sp->discard && again.direct == sp->direct);
}

static void fuzz_spec(const char *text)
{
	struct swap_spec sp, before;
	char err[300];
	int ret;

	memset(&sp, 0xa5, sizeof(sp));
	before = sp;
	ret = swap_spec_parse(text, &sp, err, sizeof(err));
	if (ret) {
		REQUIRE(ret == -EINVAL || ret == -ENAMETOOLONG);
		REQUIRE(!memcmp(&sp, &before, sizeof(sp)));
		check_err(err, sizeof(err));
		REQUIRE(!strncmp(err, "--swap \"", 8));
		return;
	}
	check_spec(&sp);
	check_round_trip(&sp);
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * The lists built from the parsed devices: every pick is a device with
 * room whose priority on that node's list is the highest there.
 */
static void fuzz_lists(const struct swap_spec *tab, unsigned n,
		       const uint8_t *ops, size_t nr_ops)
{
	int prio[SWAP_MAX_DEVICES], node[SWAP_MAX_DEVICES];
	unsigned nr_nodes = 1 + (nr_ops & 3), i, d;
	struct swap_avail *sa;
	char desc[512];

	for (i = 0; i < n; i++) {
		prio[i] = tab[i].prio;
		node[i] = tab[i].node % 5;	/* keep some nodes in range */
		if (node[i] < -1)
			node[i] = -1;
	}
	REQUIRE(swap_avail_create(&sa, nr_nodes, prio, node, n) == 0);
	for (i = 0; i < nr_ops && i < 256; i++) {
		int want_node = (int)(ops[i] >> 4) % (int)(nr_nodes + 2) - 1;
		unsigned list = want_node < 0 || (unsigned)want_node >= nr_nodes ?
				0 : (unsigned)want_node;
		int best = INT_MIN, got;

		d = (ops[i] & 15) % n;
		switch (ops[i] & 3) {
		case 0:
			swap_avail_full(sa, d);
			break;
		case 1:
			swap_avail_room(sa, d);
			break;
		default:
			for (d = 0; d < n; d++) {
				int p = swap_avail_prio_on(sa, list, d);

				if (swap_avail_has_room(sa, d) && p > best)
					best = p;
			}
			got = swap_avail_next(sa, want_node);
			if (best == INT_MIN) {
				REQUIRE(got == -ENOSPC);
			} else {
				REQUIRE(got >= 0 && (unsigned)got < n);
				REQUIRE(swap_avail_has_room(sa, (unsigned)got));
				REQUIRE(swap_avail_prio_on(sa, list, (unsigned)got) == best);
			}
		}
	}
	REQUIRE(swap_avail_validate(sa) == 0);
	REQUIRE(swap_avail_describe(sa, desc, sizeof(desc)) >= strlen(desc));
	swap_avail_destroy(sa);
}

static void fuzz_swaptab(const char *text, unsigned max, const uint8_t *ops,
			 size_t nr_ops)
{
	struct swap_spec tab[SWAP_MAX_DEVICES + 1];
	unsigned n = 77, i, j;
	char err[300];
	int ret;

	memset(tab, 0xa5, sizeof(tab));
	ret = swaptab_parse_text("fuzz", text, tab, max, &n, err, sizeof(err));
	if (ret) {
		REQUIRE(ret == -EINVAL || ret == -ENAMETOOLONG || ret == -E2BIG);
		REQUIRE(n == 77);
		check_err(err, sizeof(err));
		REQUIRE(!strncmp(err, "fuzz:", 5));
		return;
	}
	REQUIRE(n >= 1 && n <= max && n <= SWAP_MAX_DEVICES);
	for (i = 0; i < n; i++) {
		size_t len = strlen(tab[i].path);

		check_spec(&tab[i]);
		REQUIRE(!strchr(tab[i].path, '\n'));
		REQUIRE(tab[i].path[0] != '#');
		REQUIRE(!blank(tab[i].path[0]) && !blank(tab[i].path[len - 1]));
		for (j = 0; j < i; j++)
			REQUIRE(strcmp(tab[i].path, tab[j].path));
	}
	fuzz_lists(tab, n, ops, nr_ops);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	unsigned max;

	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	fuzz_spec(text);
	/* The last byte picks the device limit, sometimes below 15. */
	max = size ? data[size - 1] % 20 : SWAP_MAX_DEVICES;
	fuzz_swaptab(text, max, data, size);
	free(text);
	return 0;
}
