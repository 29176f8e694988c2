// SPDX-License-Identifier: MIT
/*
 * inject.c - faults injected through the system-call layer (USWAP_INJECT,
 * src/prim.c), and a swap device corrupted behind uswap's back: the
 * program's data stays intact, or where it is gone (a failed or corrupt
 * read) the program gets SIGBUS in the folio that lost it and nowhere
 * else; the failure is counted, and logged once.
 *
 *   inject SCENARIO [FOLIO]
 *
 * A workload writes a 32 MiB region under an 8 MiB budget (so that it
 * cycles through the device), rewrites a third of it, and checks every
 * page twice; every access runs under a SIGBUS handler (sigsetjmp) that
 * records where the signal hit.  A folio that raised SIGBUS once must
 * raise it at every page, every time; no other page may raise it, and
 * every other page must hold the last version written.
 *
 *   write_eio	  two devices, writes to the first fail: it is taken out of
 *		  use, the second takes everything (swap_io_error, one line)
 *   read_eio	  every 7th read fails: those folios, and only those, raise
 *		  SIGBUS (swap_io_error == folios lost, one line)
 *   corrupt	  every 5th read comes back with a byte changed: SIGBUS
 *		  there (swap_corrupt == folios lost, one line)
 *   short_io	  every transfer of several pages comes back short: all
 *		  completed by resubmission (counted in swap_io_short),
 *		  nothing lost, no error
 *   enospc	  two devices, the first's file system is full: it counts
 *		  as full, the second takes everything (one line)
 *   enospc_some  one device, every 3rd reservation or write finds no room
 *		  (swap_full, one line), nothing lost
 *   mmap_enomem  every 3rd mmap fails with ENOMEM, cleanly; the regions
 *		  that were made work
 *   uffd_eagain  every 3rd UFFDIO_COPY / UFFDIO_WRITEPROTECT fails with
 *		  EAGAIN: retried, nothing lost, no error
 *   uffd_eexist  every 4th UFFDIO_COPY finds its first page mapped by
 *		  someone else: the rest is installed, nothing lost
 *   compress_fail  the pool's compressor fails every 2nd unit: those go
 *		  to the device (zswap_reject_compress_fail, one line); the
 *		  pool's writeback records checksums that verify
 *   tamper	  a slot of the swap file is overwritten through
 *		  /proc/self/fd: SIGBUS in that folio, swap_corrupt 1, one
 *		  line naming the device, the slot and both checksums
 *   tamper_off	  the same with --verify off: the garbage reads back, as
 *		  the program's data (what "off" gives up)
 *
 * FOLIO is the folio size (default 64K; at 4K and 16K swap-in reads
 * ahead).  Faults on the uffd ioctls need no device: the others name
 * device files in a temporary directory.  uswap's log goes to a file
 * (counted), shown when the test fails.  White-box: includes runtime.h to
 * reach the runtime's devices (tamper) and per-device counters.
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "crc32c.h"
#include "base.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "uswap.h"

#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON	(1 << 14)
#endif

#define REGION		(32u << 20)
#define NPAGES		(REGION / T_PAGE)
#define MAX_FOLIOS	(NPAGES + 1)

struct work {
	struct uswap_runtime *rt;
	char *base;
	uintptr_t origin;		/* folio boundaries: base rounded down */
	unsigned folio_pages;
	bool may_lose;			/* the scenario may lose folios */
	uint32_t version[NPAGES];	/* 0: never written */
	bool lost[MAX_FOLIOS];		/* raised SIGBUS */
	unsigned nr_lost;
};

static struct work w;
static uint64_t folio_bytes = 64u << 10;
static char dir[] = "/tmp/uswap-inject-XXXXXX";
static char log_path[] = "/tmp/uswap-inject-log-XXXXXX";
static int orig_stderr = -1;
static bool passed;

/* --- uswap's log, captured --- */

static void dump_log(void)
{
	char buf[4096];
	ssize_t n;
	int fd;

	if (orig_stderr < 0)
		return;
	fflush(stderr);
	dup2(orig_stderr, STDERR_FILENO);
	fd = passed ? -1 : open(log_path, O_RDONLY);
	if (fd >= 0) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			(void)!write(STDERR_FILENO, buf, (size_t)n);
		close(fd);
	}
	unlink(log_path);
	if (dir[0] && strcmp(dir, "/tmp/uswap-inject-XXXXXX")) {
		char path[sizeof(dir) + 8];

		snprintf(path, sizeof(path), "%s/a", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/b", dir);
		unlink(path);
		rmdir(dir);
	}
}

/* Send stderr (uswap's log, and ours) to a file, shown if the test fails. */
static void capture_log(void)
{
	int fd = mkstemp(log_path);

	if (fd < 0)
		t_fail("mkstemp: %s", strerror(errno));
	orig_stderr = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	setvbuf(stderr, NULL, _IONBF, 0);
	atexit(dump_log);
}

/* Lines of the log that contain needle. */
static unsigned log_count(const char *needle)
{
	static char text[1 << 20];
	unsigned count = 0;
	char *line, *save;
	ssize_t n;
	int fd = open(log_path, O_RDONLY);

	if (fd < 0)
		t_fail("open %s: %s", log_path, strerror(errno));
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		count += strstr(line, needle) != NULL;
	return count;
}

static void expect_log(const char *needle, unsigned want)
{
	unsigned got = log_count(needle);

	if (got != want)
		t_fail("the log has %u lines with \"%s\", expected %u", got,
		       needle, want);
}

/* --- accesses under a SIGBUS handler --- */

static sigjmp_buf bus_jmp;
static void *volatile bus_addr;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (!bus_armed) {
		signal(sig, SIG_DFL);	/* not ours: die of it */
		return;
	}
	bus_armed = 0;
	bus_addr = si->si_addr;
	siglongjmp(bus_jmp, 1);
}

static unsigned folio_of(uint64_t p)
{
	return (unsigned)(((uintptr_t)w.base + p * T_PAGE - w.origin) /
			  folio_bytes);
}

/*
 * Write version v into page p, or (v 0) check it holds its version.
 * Returns false when the access raised SIGBUS, which must have hit p.
 */
static bool touch(uint64_t p, uint32_t v)
{
	char *a = w.base + p * T_PAGE;

	if (sigsetjmp(bus_jmp, 1)) {
		if ((char *)bus_addr < a || (char *)bus_addr >= a + T_PAGE)
			t_fail("SIGBUS at %p while touching page %llu (%p)",
			       bus_addr, (unsigned long long)p, (void *)a);
		return false;
	}
	bus_armed = 1;
	if (v) {
		t_fill(a, p, v);
	} else if (w.version[p] ? t_check(a, p, w.version[p]) :
		   (a[0] || memcmp(a, a + 1, T_PAGE - 1))) {
		bus_armed = 0;
		t_fail("page %llu does not hold version %u", (unsigned long long)p,
		       w.version[p]);
	}
	bus_armed = 0;
	return true;
}

/* Touch page p; account for a SIGBUS (only in a lost folio, and always there). */
static void visit(uint64_t p, uint32_t v)
{
	unsigned f = folio_of(p);
	bool ok = touch(p, v);

	if (ok && w.lost[f])
		t_fail("page %llu of a lost folio gave data", (unsigned long long)p);
	if (ok) {
		if (v)
			w.version[p] = v;
		return;
	}
	if (w.lost[f])
		return;
	if (!w.may_lose)
		t_fail("SIGBUS at page %llu: no data should be lost here",
		       (unsigned long long)p);
	w.lost[f] = true;
	w.nr_lost++;
}

/* The lost folios raise SIGBUS at each of their pages. */
static void check_lost_whole(void)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		if (w.lost[folio_of(p)] && touch(p, 0))
			t_fail("page %llu of a lost folio gave data",
			       (unsigned long long)p);
}

static void workload(void)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		visit(p, 1);
	for (p = 0; p < NPAGES; p += 3)
		visit(p, 2);
	for (p = 0; p < NPAGES; p++)
		visit(p, 0);
	for (p = 0; p < NPAGES; p++)
		visit(p, 0);
	check_lost_whole();
}

/* --- setup --- */

static void set_opt(struct uswap_options *o, const char *name, const char *value)
{
	char why[256];

	if (uswap_options_set(o, name, value, why, sizeof(why)))
		t_fail("%s", why);
}

/* Options for a scenario: devices a (prio 10) and b (prio 5) in dir. */
static void options(struct uswap_options *o, unsigned ndev)
{
	char spec[sizeof(dir) + 64], size[32];

	uswap_options_init(o);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)folio_bytes);
	set_opt(o, "max", "8M");
	set_opt(o, "folio", size);
	if (ndev && !mkdtemp(dir))
		t_fail("mkdtemp: %s", strerror(errno));
	if (ndev >= 1) {
		snprintf(spec, sizeof(spec), "%s/a,prio=10,size=256M", dir);
		set_opt(o, "swap", spec);
	}
	if (ndev >= 2) {
		snprintf(spec, sizeof(spec), "%s/b,prio=5,size=256M", dir);
		set_opt(o, "swap", spec);
	}
}

static void start(const struct uswap_options *o, const char *inject)
{
	struct sigaction sa;
	int err, tries;

	if (inject)
		setenv("USWAP_INJECT", inject, 1);
	else
		unsetenv("USWAP_INJECT");
	unsetenv("USWAP_INJECT_WRITE_EIO");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	w.rt = t_runtime(o);
	/* mmap_enomem may pick this one: it fails cleanly, try again. */
	for (tries = 0; tries < 3; tries++)
		if ((err = uswap_region_create(w.rt, REGION,
					       (void **)&w.base)) != -ENOMEM)
			break;
	if (err)
		t_fail("uswap_region_create: %s", strerror(-err));
	w.origin = (uintptr_t)w.base & ~(uintptr_t)(folio_bytes - 1);
}

/* Losing data needs UFFDIO_POISON: without it the process dies at once. */
static void need_poison(void)
{
	if (!(w.rt->features & UFFD_FEATURE_POISON))
		t_skip("UFFD_FEATURE_POISON is unavailable (kernel before 6.6): a lost folio kills the process");
}

static uint64_t ctr(unsigned c)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(w.rt, v, USWAP_NR_COUNTERS);
	return v[c];
}

static uint64_t dev_pswpout(unsigned k)
{
	return atomic_load(&w.rt->swapstat[k].pswpout);
}

static void expect(bool ok, const char *what)
{
	if (!ok)
		t_fail("%s", what);
}

/* --- scenarios --- */

static void write_eio(void)
{
	struct uswap_options o;

	options(&o, 2);
	start(&o, "write_eio=0");
	workload();
	printf("write_eio: swap_io_error %llu, device a wrote %llu pages, b %llu\n",
	       (unsigned long long)ctr(USWAP_SWAP_IO_ERROR),
	       (unsigned long long)dev_pswpout(0),
	       (unsigned long long)dev_pswpout(1));
	expect(ctr(USWAP_SWAP_IO_ERROR) > 0, "no swap_io_error counted");
	expect(dev_pswpout(0) == 0 && dev_pswpout(1) > 0,
	       "the failing device was used, or the other one was not");
	expect_log("write failed (Input/output error): taken out of use", 1);
}

/* Reads that lose data: SIGBUS in exactly as many folios as counted. */
static void lost_reads(const char *name, const char *inject, unsigned counter,
		       const char *line)
{
	struct uswap_options o;

	options(&o, 1);
	start(&o, inject);
	need_poison();
	w.may_lose = true;
	workload();
	printf("%s: %u folios lost (SIGBUS), swap_io_error %llu, swap_corrupt %llu, pswpin %llu\n",
	       name, w.nr_lost, (unsigned long long)ctr(USWAP_SWAP_IO_ERROR),
	       (unsigned long long)ctr(USWAP_SWAP_CORRUPT),
	       (unsigned long long)ctr(USWAP_PSWPIN));
	expect(w.nr_lost > 0, "no folio was lost: the fault was not injected");
	expect(ctr(counter) == w.nr_lost,
	       "the counter does not match the folios that raised SIGBUS");
	expect(ctr(counter == USWAP_SWAP_CORRUPT ? USWAP_SWAP_IO_ERROR :
		   USWAP_SWAP_CORRUPT) == 0, "the other counter moved");
	expect_log(line, 1);
}

static void short_io(void)
{
	struct uswap_options o;

	options(&o, 1);
	start(&o, "short_write=0,short_read=0");
	workload();
	printf("short_io: pswpout %llu pswpin %llu swap_io_short %llu swap_io_error %llu\n",
	       (unsigned long long)ctr(USWAP_PSWPOUT),
	       (unsigned long long)ctr(USWAP_PSWPIN),
	       (unsigned long long)ctr(USWAP_SWAP_IO_SHORT),
	       (unsigned long long)ctr(USWAP_SWAP_IO_ERROR));
	expect(ctr(USWAP_PSWPOUT) > 0 && ctr(USWAP_PSWPIN) > 0, "no swap I/O");
	expect(ctr(USWAP_SWAP_IO_ERROR) == 0, "a short transfer was an error");
	expect(ctr(USWAP_SWAP_IO_SHORT) > 0, "short transfers were not counted");
}

static void enospc(void)
{
	struct uswap_options o;

	options(&o, 2);
	start(&o, "enospc=0");
	workload();
	printf("enospc: device a wrote %llu pages, b %llu\n",
	       (unsigned long long)dev_pswpout(0),
	       (unsigned long long)dev_pswpout(1));
	expect(dev_pswpout(0) == 0 && dev_pswpout(1) > 0,
	       "the full device was used, or the other one was not");
	expect(ctr(USWAP_SWAP_IO_ERROR) == 0, "a full device counted as an I/O error");
	expect_log("counts as full", 1);
}

static void enospc_some(void)
{
	struct uswap_options o;

	options(&o, 1);
	start(&o, "enospc=0:3");
	workload();
	printf("enospc_some: swap_full %llu pswpout %llu max_overrun %llu\n",
	       (unsigned long long)ctr(USWAP_SWAP_FULL),
	       (unsigned long long)ctr(USWAP_PSWPOUT),
	       (unsigned long long)ctr(USWAP_MAX_OVERRUN));
	expect(ctr(USWAP_SWAP_FULL) > 0, "no swap_full counted");
	expect(ctr(USWAP_PSWPOUT) > 0, "nothing was written");
	expect(ctr(USWAP_SWAP_IO_ERROR) == 0, "a full device counted as an I/O error");
	expect_log("counts as full", 1);
}

static void mmap_enomem(void)
{
	enum { NR = 10, LEN = 4 << 20 };
	struct uswap_options o;
	char *r[NR];
	int err[NR], first = -1, nfail = 0, i;	/* first: first failure */
	uint64_t p;

	options(&o, 0);
	start(&o, "mmap_enomem=3");
	for (i = 0; i < NR; i++) {
		void *a = NULL;

		err[i] = uswap_region_create(w.rt, LEN, &a);
		r[i] = a;
		if (err[i] && err[i] != -ENOMEM)
			t_fail("region %d: %s, expected ENOMEM", i, strerror(-err[i]));
		if (err[i] && first < 0)
			first = i;
		nfail += err[i] != 0;
	}
	expect(first >= 0 && first < 3, "none of the first three mmaps failed");
	for (i = 0; i < NR; i++)
		if (!err[i] != ((i - first) % 3 != 0))
			t_fail("mmap %d %s: not every 3rd failed", i,
			       err[i] ? "failed" : "did not fail");
	expect(nfail >= 3, "fewer than three mmaps failed");
	/* The regions made work, together with the first one. */
	for (i = 0; i < NR; i++)
		for (p = 0; !err[i] && p < LEN / T_PAGE; p++)
			t_fill(r[i] + p * T_PAGE, p + (uint64_t)i * 1000000, 5);
	workload();
	for (i = 0; i < NR; i++)
		for (p = 0; !err[i] && p < LEN / T_PAGE; p++)
			if (t_check(r[i] + p * T_PAGE, p + (uint64_t)i * 1000000, 5))
				t_fail("region %d page %llu lost its data", i,
				       (unsigned long long)p);
	printf("mmap_enomem: %d of %d mmaps failed with ENOMEM; pswpout %llu\n",
	       nfail, NR, (unsigned long long)ctr(USWAP_PSWPOUT));
	expect(ctr(USWAP_PSWPOUT) > 0, "no swap I/O");
}

/*
 * The workload once without injection (the counter stays zero: one
 * thread, nothing changes the address space), then again in a new
 * runtime with it: nothing lost, the counter counts.
 */
static void uffd_fault(const char *name, const char *inject, unsigned counter)
{
	struct uswap_options o;

	options(&o, 0);
	start(&o, NULL);
	workload();
	if (ctr(counter))
		t_fail("%s: %llu counted without injection", name,
		       (unsigned long long)ctr(counter));
	uswap_runtime_destroy(w.rt);
	memset(&w, 0, sizeof(w));
	options(&o, 0);
	start(&o, inject);
	workload();
	printf("%s: pgmajfault %llu swap_ra %llu wp_fault %llu uffd_eagain %llu uffd_eexist %llu\n",
	       name, (unsigned long long)ctr(USWAP_PGMAJFAULT),
	       (unsigned long long)ctr(USWAP_SWAP_RA),
	       (unsigned long long)ctr(USWAP_WP_FAULT),
	       (unsigned long long)ctr(USWAP_UFFD_EAGAIN),
	       (unsigned long long)ctr(USWAP_UFFD_EEXIST));
	expect(ctr(USWAP_PGMAJFAULT) > 0, "nothing came back from swap");
	expect(ctr(USWAP_SWAP_IO_ERROR) == 0 && ctr(USWAP_SWAP_CORRUPT) == 0,
	       "an error was counted");
	expect(ctr(counter) > 0, "the injected errors were not counted");
}

static void compress_fail(void)
{
	struct uswap_options o;

	options(&o, 1);
	set_opt(&o, "zswap", "lz4");
	start(&o, "compress_fail=2");
	workload();
	printf("compress_fail: zswap_reject_compress_fail %llu zswpout %llu zswpwb %llu pswpout %llu\n",
	       (unsigned long long)ctr(USWAP_ZSWAP_REJECT_COMPRESS_FAIL),
	       (unsigned long long)ctr(USWAP_ZSWPOUT),
	       (unsigned long long)ctr(USWAP_ZSWPWB),
	       (unsigned long long)ctr(USWAP_PSWPOUT));
	expect(ctr(USWAP_ZSWAP_REJECT_COMPRESS_FAIL) > 0, "no compressor failure counted");
	expect(ctr(USWAP_ZSWPOUT) > 0, "the pool took nothing");
	expect(ctr(USWAP_PSWPOUT) > 0, "nothing went to the device");
	/* Pages the pool wrote back carry checksums too: they read back. */
	expect(ctr(USWAP_ZSWPWB) > 0, "the pool wrote nothing back");
	expect_log("the compressor failed", 1);
}

/*
 * A folio of the region that is swapped out, wholly on device 0: its
 * first page, and that page's slot.  -1 when there is none.  The fault
 * thread that later frees these entries does so because of our own access
 * (a page fault), an order ThreadSanitizer cannot see: hence the marks.
 */
static int64_t swapped_page(uint32_t *slot)
{
	struct uswap_runtime *rt = w.rt;
	int64_t found = -1;
	struct region *r;
	uint32_t i, k;

	pthread_rwlock_rdlock(&rt->op_lock);
	program_memory_read_begin();
	r = region_find_locked(rt, (uintptr_t)w.base);
	for (i = 1; r && found < 0 && i + 1 < r->nr_folios; i++) {
		uintptr_t a;
		size_t len;
		uint32_t page;

		if (folio_state(atomic_load(&r->folios[i].flags)) != FOLIO_SWAPPED)
			continue;
		folio_range(r, i, &a, &len, &page);
		for (k = 0; k < len / T_PAGE; k++)
			if (!r->swp[page + k] || swp_type(r->swp[page + k]))
				break;
		if (k < len / T_PAGE)
			continue;
		found = page;
		*slot = swp_offset(r->swp[page]);
	}
	program_memory_read_end();
	pthread_rwlock_unlock(&rt->op_lock);
	return found;
}

/* Overwrite a swapped page's slot in the swap file, behind uswap's back. */
static void tamper(bool verify)
{
	struct uswap_options o;
	static char garbage[T_PAGE];
	char path[64], line[512];
	uint32_t slot = 0, want;
	struct swap_info *si;
	int64_t page;
	int fd;

	options(&o, 0);
	if (!verify)
		set_opt(&o, "verify", "off");
	start(&o, NULL);
	si = &w.rt->swap[0];
	workload();
	page = swapped_page(&slot);
	if (page < 0)
		t_fail("no folio is swapped out to tamper with");
	memset(garbage, 0xa5, sizeof(garbage));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", si->fd);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	if (pwrite(fd, garbage, T_PAGE, (off_t)slot * T_PAGE) != T_PAGE)
		t_fail("pwrite into the swap file: %s", strerror(errno));
	fsync(fd);
	close(fd);
	if (verify != (si->csum != NULL))
		t_fail("checksums are %s with verify %s", si->csum ? "on" : "off",
		       verify ? "on" : "off");
	want = verify ? si->csum[slot] : 0;
	w.may_lose = verify;
	if (!verify) {
		/* Off: the garbage is what the program reads. */
		if (memcmp(w.base + page * T_PAGE, garbage, T_PAGE))
			t_fail("verify off: page %lld does not read the garbage written to slot %u",
			       (long long)page, slot);
		printf("tamper_off: slot %u overwritten; page %lld reads it back unnoticed\n",
		       slot, (long long)page);
		expect(ctr(USWAP_SWAP_CORRUPT) == 0, "swap_corrupt counted with verify off");
		expect_log("failed its checksum", 0);
		return;
	}
	visit((uint64_t)page, 0);
	if (w.nr_lost != 1 || !w.lost[folio_of((uint64_t)page)])
		t_fail("page %lld read without SIGBUS after its slot was overwritten",
		       (long long)page);
	/* Everything else is intact; the lost folio stays lost. */
	workload();
	printf("tamper: slot %u overwritten; SIGBUS at page %lld only; swap_corrupt %llu\n",
	       slot, (long long)page, (unsigned long long)ctr(USWAP_SWAP_CORRUPT));
	expect(ctr(USWAP_SWAP_CORRUPT) == 1, "swap_corrupt is not 1");
	snprintf(line, sizeof(line),
		 "swap device %s: slot %u failed its checksum (expected crc32c %08x, found %08x)",
		 si->path, slot, want, crc32c(0, garbage, T_PAGE));
	expect_log(line, 1);
	expect_log("failed its checksum", 1);
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";

	if (argc > 2)
		folio_bytes = t_size(argv[2]);
	capture_log();
	if (!strcmp(s, "write_eio"))
		write_eio();
	else if (!strcmp(s, "read_eio"))
		lost_reads(s, "read_eio=0:7", USWAP_SWAP_IO_ERROR, "reading slots");
	else if (!strcmp(s, "corrupt"))
		lost_reads(s, "corrupt=0:5", USWAP_SWAP_CORRUPT, "failed its checksum");
	else if (!strcmp(s, "short_io"))
		short_io();
	else if (!strcmp(s, "enospc"))
		enospc();
	else if (!strcmp(s, "enospc_some"))
		enospc_some();
	else if (!strcmp(s, "mmap_enomem"))
		mmap_enomem();
	else if (!strcmp(s, "uffd_eagain"))
		uffd_fault(s, "uffd_eagain=3", USWAP_UFFD_EAGAIN);
	else if (!strcmp(s, "uffd_eexist"))
		uffd_fault(s, "uffd_eexist=4", USWAP_UFFD_EEXIST);
	else if (!strcmp(s, "compress_fail"))
		compress_fail();
	else if (!strcmp(s, "tamper"))
		tamper(true);
	else if (!strcmp(s, "tamper_off"))
		tamper(false);
	else
		t_fail("usage: inject write_eio|read_eio|corrupt|short_io|enospc|enospc_some|mmap_enomem|uffd_eagain|uffd_eexist|compress_fail|tamper|tamper_off [FOLIO]");
	uswap_runtime_destroy(w.rt);
	passed = true;
	return T_PASS;
}
