// SPDX-License-Identifier: MIT
/*
 * swap_grow.c - swapped data larger than the swap file's first size reads
 * back byte-exact, and freeing it gives the file's blocks back.
 *
 *   swap_grow SIZE KEEP DIR [SECONDS]
 *
 * Run under uswap run with --swap-dir DIR: maps SIZE bytes, writes every
 * 8-byte word with a value of its index, reads them all back, then unmaps
 * all but the last KEEP bytes and waits (up to SECONDS, default 60) for
 * the swap file's allocated blocks (the unnamed file of DIR among this
 * process's descriptors, stat'ed through /proc/self/fd) to fall to KEEP
 * plus 64 MiB or less; the KEEP bytes are checked again (KEEP equal
 * to SIZE: nothing is unmapped).  Prints "allocated_kib BEFORE AFTER".  Exit 0 when every word read back right
 * and the blocks fell; 1 otherwise; 77 when no swap file was found.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static uint64_t word_of(uint64_t i)
{
	uint64_t z = i + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void check(const uint64_t *p, uint64_t from, uint64_t to)
{
	uint64_t i;

	for (i = from; i < to; i++)
		if (p[i] != word_of(i))
			t_fail("word %llu (offset %llu): %016llx, expected %016llx",
			       (unsigned long long)i,
			       (unsigned long long)(i * 8),
			       (unsigned long long)p[i],
			       (unsigned long long)word_of(i));
}

/*
 * The allocated bytes of the swap file: the descriptor whose target is in
 * dir and deleted (O_TMPFILE shows as "DIR/#INO (deleted)").  -1 if none.
 */
static long long swap_file_bytes(const char *dir)
{
	char link[300], target[4096];
	long long best = -1;
	struct dirent *de;
	size_t dl = strlen(dir);
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct stat st;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strncmp(target, dir, dl) || target[dl] != '/' ||
		    !strstr(target, "(deleted)"))
			continue;
		if (stat(link, &st) || !S_ISREG(st.st_mode))
			continue;
		if ((long long)st.st_blocks * 512 > best)
			best = (long long)st.st_blocks * 512;
	}
	closedir(d);
	return best;
}

int main(int argc, char **argv)
{
	uint64_t size, keep, words, kept_from, i;
	long long before, after;
	unsigned waited = 0, limit;
	uint64_t *p;

	if (argc < 4) {
		fprintf(stderr, "usage: swap_grow SIZE KEEP DIR [SECONDS]\n");
		return 2;
	}
	size = t_size(argv[1]);
	keep = t_size(argv[2]);
	limit = argc > 4 ? (unsigned)atoi(argv[4]) : 60;
	if (keep > size || size % 4096 || keep % 4096)
		t_fail("bad SIZE or KEEP");
	words = size / 8;
	kept_from = (size - keep) / 8;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		t_fail("mmap %s: %s", argv[1], strerror(errno));
	for (i = 0; i < words; i++)
		p[i] = word_of(i);
	check(p, 0, words);
	before = swap_file_bytes(argv[3]);
	if (before < 0)
		t_skip("no swap file in the swap directory among the descriptors");
	if (keep == size) {
		printf("allocated_kib %lld\n", before >> 10);
		return 0;
	}
	if (munmap(p, size - keep))
		t_fail("munmap: %s", strerror(errno));
	for (;;) {
		after = swap_file_bytes(argv[3]);
		if (after <= (long long)(keep + (64 << 20)) || waited >= limit * 10)
			break;
		usleep(100000);
		waited++;
	}
	check(p, kept_from, words);
	printf("allocated_kib %lld %lld\n", before >> 10, after >> 10);
	if (after > (long long)(keep + (64 << 20)))
		t_fail("the swap file kept %lld KiB of %lld allocated after %llu of %llu MiB were unmapped (%u s)",
		       after >> 10, before >> 10,
		       (unsigned long long)((size - keep) >> 20),
		       (unsigned long long)(size >> 20), waited / 10);
	return 0;
}
