// SPDX-License-Identifier: MIT
/*
 * poolfill.c - fill memory with realistic pages and hold it, so that a
 * compressed tier can be looked at while it is full.
 *
 * bench/compare measures compression ratios with it.  usemem unmaps its
 * region before it exits, so by the time uswap writes its counters (at
 * exit) or the harness reads the kernel's zswap or zram statistics, the
 * pool is empty again.  poolfill instead:
 *
 *   1. maps SIZE bytes (one anonymous private mapping, as usemem does) and
 *      writes every page in order with generation 1 of the chosen data
 *      (pagedata.h: the same pages as usemem's first pass);
 *   2. with --hold PATH, creates PATH and waits until someone removes it
 *      (the harness reads /sys/kernel/debug/zswap or zram's mm_stat in
 *      the meantime), at most --hold-timeout seconds;
 *   3. exits with exit(), never unmapping: destructors run (uswap's
 *      preload writes its --stats then) while the region, and so the
 *      pool, is still full.
 *
 * It prints one line: poolfill data=... size=... secs=... mbps=... held=0|1
 * Exit status: 0 done, 1 a system call failed or the hold timed out,
 * 2 bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uswap.h"

#include "pagedata.h"

#define HOLD_POLL_US	10000

struct pf_config {
	uint64_t size;
	enum um_data data;
	const char *hold;	/* NULL: do not hold */
	unsigned hold_timeout;	/* seconds */
};

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: poolfill [--size SIZE] [--data mixed|text|random|zero]\n"
"                [--hold PATH] [--hold-timeout SECS]\n"
"Writes SIZE bytes (default 256M) of one anonymous mapping page by page,\n"
"then, with --hold, creates PATH and waits until it is removed (at most\n"
"SECS seconds, default 120), then exits without unmapping, so that a\n"
"compressed tier can be inspected while it holds the data.\n");
}


static void __attribute__((noreturn)) bad_arg(const char *opt, const char *val,
					      const char *want)
{
	fprintf(stderr, "poolfill: %s '%s': expected %s\n", opt, val, want);
	exit(2);
}

enum { OPT_SIZE = 256, OPT_DATA, OPT_HOLD, OPT_HOLD_TIMEOUT, OPT_HELP };

static const struct option long_opts[] = {
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "data", required_argument, NULL, OPT_DATA },
	{ "hold", required_argument, NULL, OPT_HOLD },
	{ "hold-timeout", required_argument, NULL, OPT_HOLD_TIMEOUT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv, struct pf_config *cfg)
{
	unsigned long v;
	char *end;
	int c;

	*cfg = (struct pf_config){
		.size = 256ULL << 20,
		.data = DATA_MIXED,
		.hold_timeout = 120,
	};
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_SIZE:
			if (uswap_size_parse(optarg, &cfg->size) ||
			    cfg->size < UM_PAGE)
				bad_arg("--size", optarg,
					"a size of at least 4K, such as 512M");
			break;
		case OPT_DATA:
			for (v = 0; v < 4; v++)
				if (!strcmp(optarg, data_names[v]))
					break;
			if (v == 4)
				bad_arg("--data", optarg,
					"mixed, text, random or zero");
			cfg->data = (enum um_data)v;
			break;
		case OPT_HOLD:
			if (!*optarg)
				bad_arg("--hold", optarg, "a file name");
			cfg->hold = optarg;
			break;
		case OPT_HOLD_TIMEOUT:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || *optarg < '0' || *optarg > '9' ||
			    v < 1 || v > 86400)
				bad_arg("--hold-timeout", optarg,
					"seconds, 1 to 86400");
			cfg->hold_timeout = (unsigned)v;
			break;
		case OPT_HELP:
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		bad_arg("argument", argv[optind], "options only (see --help)");
}

/*
 * Create the hold file, then wait for it to go.  0 once removed, -ETIMEDOUT
 * or -errno.
 */
static int hold(const struct pf_config *cfg)
{
	const double deadline = now_secs() + cfg->hold_timeout;
	int fd;

	fd = open(cfg->hold, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	while (access(cfg->hold, F_OK) == 0) {
		if (now_secs() > deadline) {
			unlink(cfg->hold);
			return -ETIMEDOUT;
		}
		usleep(HOLD_POLL_US);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pf_config cfg;
	uint64_t i, pages;
	double t0, secs;
	uint8_t *base;
	int ret = 0;

	parse_args(argc, argv, &cfg);
	text_templates_init();
	pages = cfg.size / UM_PAGE;
	base = mmap(NULL, pages * UM_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "poolfill: mmap %llu bytes: %s\n",
			(unsigned long long)(pages * UM_PAGE), strerror(errno));
		return 1;
	}
	t0 = now_secs();
	for (i = 0; i < pages; i++)
		page_fill(base + i * UM_PAGE, cfg.data, i, 1);
	secs = now_secs() - t0;
	printf("poolfill data=%s size=%llu secs=%.3f mbps=%.1f held=%d\n",
	       data_names[cfg.data], (unsigned long long)(pages * UM_PAGE),
	       secs, (double)(pages * UM_PAGE) / 1e6 / (secs > 0 ? secs : 1e-9),
	       cfg.hold ? 1 : 0);
	fflush(stdout);
	if (cfg.hold)
		ret = hold(&cfg);
	if (ret) {
		fprintf(stderr, "poolfill: hold %s: %s\n", cfg.hold,
			strerror(-ret));
		return 1;
	}
	/* No munmap: the region, and whatever tier holds it, stays full. */
	exit(0);
}
