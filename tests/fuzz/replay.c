// SPDX-License-Identifier: MIT
/*
 * replay.c - run a fuzz target over files, without libFuzzer: make check
 * replays each target's corpus (tests/fuzz/corpus/NAME) with this driver.
 *
 *   NAME FILE|DIR...   each regular file is one input; exit 0 when all ran
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static int replay(const char *path, unsigned *count)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int bad = 0;

	if (stat(path, &st)) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return replay_file(path);
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		return 1;
	}
	while ((de = readdir(d))) {
		char sub[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		bad |= replay(sub, count);
	}
	closedir(d);
	return bad;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int bad = 0, i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		bad |= replay(argv[i], &count);
	printf("%u inputs replayed\n", count);
	return bad;
}
