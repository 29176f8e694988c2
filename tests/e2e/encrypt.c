// SPDX-License-Identifier: MIT
/*
 * encrypt.c - encryption at rest (--encrypt on) end to end: every page
 * comes back intact through every path that reaches a device, the device
 * never holds the program's bytes, and bytes changed or moved on the
 * device give SIGBUS in that folio only, counted and logged once.
 *
 *   encrypt SCENARIO [ARGS]
 *
 * A workload writes a 32 MiB region under an 8 MiB budget (it cycles
 * through the device), rewrites a third, and checks every page twice,
 * every access under a SIGBUS handler (sigsetjmp) that records where the
 * signal hit (as tests/e2e/inject.c).
 *
 *   roundtrip [FOLIO]	intact (4K and 16K: through readahead too);
 *			swap_encrypt == the pages reclaim wrote to
 *			the device (its pswpout row); the device keeps
 *			no crc32c (the tag is the check); the key is locked
 *			(VmLck), or a line says why not
 *   pool [FOLIO]	the same with a small lz4 pool in front, writing
 *			back to the device: zswpwb > 0 and every page
 *			written back was sealed too (swap_encrypt >=
 *			the device's pswpout + zswpwb)
 *   plaintext on|off [pool]
 *			pages of a recognizable text are swapped out; the
 *			swap file, read through /proc/self/fd, holds none of
 *			it with on (and does with off: the test can see it)
 *   tamper byte|tag|move|move_seal|verify_off [FOLIO]
 *			a swapped slot's ciphertext gets a byte flipped
 *			(byte; verify_off: with --verify off, which the AEAD
 *			ignores), or its tag in memory does (tag), or another
 *			slot's ciphertext is copied over it (move; move_seal:
 *			with that slot's counter and tag too, so that only
 *			the associated data can tell): SIGBUS in that folio
 *			and nowhere else, swap_corrupt 1, one line naming the
 *			device and the slot
 *   fork [FOLIO] [pool]
 *			a child reads everything its parent swapped out,
 *			its key locked again, rewrites a third (its reclaim
 *			seals with the same key and counters), and the
 *			parent's view is unchanged
 *
 * FOLIO is the folio size (default 64K).  White-box: includes runtime.h
 * to reach the runtime's devices and their encryption state.
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "crypt.h"
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
#define DEV_SIZE	"64M"
#define MARKER		"USWAP-PLAINTEXT-MARKER-"

struct work {
	struct uswap_runtime *rt;
	char *base;
	uintptr_t origin;		/* folio boundaries: base rounded down */
	bool may_lose;
	bool marker;			/* pages hold MARKER text, not t_fill */
	uint32_t version[NPAGES];
	bool lost[MAX_FOLIOS];
	unsigned nr_lost;
};

static struct work w;
static uint64_t folio_bytes = 64u << 10;
static char dir[] = "/tmp/uswap-encrypt-XXXXXX";
static char log_path[] = "/tmp/uswap-encrypt-log-XXXXXX";
static int orig_stderr = -1;
static bool passed;

/* --- uswap's log, captured (shown if the test fails) --- */

static void dump_log(void)
{
	char buf[4096], path[sizeof(dir) + 8];
	ssize_t n;
	int fd;

	if (orig_stderr < 0 || getpid() != (pid_t)atoi(getenv("ENCRYPT_PID")))
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
	snprintf(path, sizeof(path), "%s/a", dir);
	unlink(path);
	rmdir(dir);
}

static void capture_log(void)
{
	char pid[32];
	int fd = mkstemp(log_path);

	if (fd < 0 || !mkdtemp(dir))
		t_fail("mkstemp/mkdtemp: %s", strerror(errno));
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("ENCRYPT_PID", pid, 1);
	orig_stderr = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	setvbuf(stderr, NULL, _IONBF, 0);
	atexit(dump_log);
}

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

static void expect(bool ok, const char *what)
{
	if (!ok)
		t_fail("%s", what);
}

/* --- accesses under a SIGBUS handler --- */

static sigjmp_buf bus_jmp;
static void *volatile bus_addr;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (!bus_armed) {
		signal(sig, SIG_DFL);
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
 * Recognizable text, MARKER and the page number, every other 32 bytes;
 * random bytes between, so that a page compresses to about half (the
 * pool takes it, fills up and writes back).
 */
static void fill_marker(char *a, uint64_t p)
{
	uint64_t s = p * 0x9E3779B97F4A7C15ull + 1, r[4];
	unsigned i;

	for (i = 0; i < T_PAGE; i += 64) {
		snprintf(a + i, 32, MARKER "%08x", (unsigned)p);
		r[0] = t_rand(&s);
		r[1] = t_rand(&s);
		r[2] = t_rand(&s);
		r[3] = t_rand(&s);
		memcpy(a + i + 32, r, 32);
	}
}

static bool check_page(const char *a, uint64_t p, uint32_t v)
{
	static char want[T_PAGE];

	if (!w.marker)
		return !t_check(a, p, v);
	fill_marker(want, p);
	return !memcmp(a, want, T_PAGE);
}

/* Write version v into page p, or (v 0) check it; false on SIGBUS. */
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
	if (v && w.marker)
		fill_marker(a, p);
	else if (v)
		t_fill(a, p, v);
	else if (!check_page(a, p, w.version[p])) {
		bus_armed = 0;
		t_fail("page %llu does not hold version %u", (unsigned long long)p,
		       w.version[p]);
	}
	bus_armed = 0;
	return true;
}

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

static void check_all(void)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		visit(p, 0);
}

static void workload(void)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		visit(p, w.version[p] + 1);
	for (p = 0; p < NPAGES && !w.marker; p += 3)
		visit(p, w.version[p] + 1);
	check_all();
	check_all();
}

/* --- setup --- */

static void set_opt(struct uswap_options *o, const char *name, const char *value)
{
	char why[256];

	if (uswap_options_set(o, name, value, why, sizeof(why)))
		t_fail("%s", why);
}

/* One swap file in dir; encryption on unless told otherwise. */
static void options(struct uswap_options *o, bool encrypt)
{
	char spec[sizeof(dir) + 64], size[32];

	uswap_options_init(o);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)folio_bytes);
	set_opt(o, "max", "8M");
	set_opt(o, "folio", size);
	snprintf(spec, sizeof(spec), "%s/a,size=" DEV_SIZE, dir);
	set_opt(o, "swap", spec);
	set_opt(o, "encrypt", encrypt ? "on" : "off");
}

static void start(const struct uswap_options *o)
{
	struct sigaction sa;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	w.rt = t_runtime(o);
	err = uswap_region_create(w.rt, REGION, (void **)&w.base);
	if (err)
		t_fail("uswap_region_create: %s", strerror(-err));
	w.origin = (uintptr_t)w.base & ~(uintptr_t)(folio_bytes - 1);
}

static uint64_t ctr(unsigned c)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(w.rt, v, USWAP_NR_COUNTERS);
	return v[c];
}

static long vm_locked_kb(void)
{
	char buf[8192], *p;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	p = strstr(buf, "VmLck:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

/* The key is locked, or the log says why it is not. */
static void expect_key_locked(const char *who)
{
	struct swap_crypt *sc = w.rt->swap[0].crypt;

	expect(sc != NULL, "the device does not encrypt");
	if (crypt_key_locked(sc->key)) {
		if (vm_locked_kb() < 4)
			t_fail("%s: the key is said locked, VmLck is %ld kB", who,
			       vm_locked_kb());
		return;
	}
	expect_log("encryption key: mlock failed", 1);
	printf("NOTE (%s): the key could not be locked here (RLIMIT_MEMLOCK)\n",
	       who);
}

/* --- scenarios --- */

static void counters(const char *name)
{
	printf("%s: pswpout %llu pswpin %llu swap_ra %llu zswpwb %llu "
	       "swap_encrypt %llu swap_corrupt %llu swap_io_error %llu\n", name,
	       (unsigned long long)ctr(USWAP_PSWPOUT),
	       (unsigned long long)ctr(USWAP_PSWPIN),
	       (unsigned long long)ctr(USWAP_SWAP_RA),
	       (unsigned long long)ctr(USWAP_ZSWPWB),
	       (unsigned long long)ctr(USWAP_SWAP_ENCRYPT),
	       (unsigned long long)ctr(USWAP_SWAP_CORRUPT),
	       (unsigned long long)ctr(USWAP_SWAP_IO_ERROR));
}

static void roundtrip(bool pool)
{
	struct uswap_options o;
	uint64_t dev_out;

	options(&o, true);
	if (pool) {
		set_opt(&o, "zswap", "lz4");
		set_opt(&o, "zswap-max", "10");
	}
	start(&o);
	expect(w.rt->swap[0].crypt && !w.rt->swap[0].csum,
	       "the device should encrypt and keep no crc32c");
	workload();
	workload();
	counters(pool ? "pool" : "roundtrip");
	expect(ctr(USWAP_PSWPOUT) > 0 && ctr(USWAP_PSWPIN) > 0, "no swap I/O");
	expect(ctr(USWAP_SWAP_CORRUPT) == 0 && ctr(USWAP_SWAP_IO_ERROR) == 0,
	       "an error was counted");
	/*
	 * Pages written by reclaim (evictions aborted after their write
	 * included: pswpout counts only those evicted), and by the pool's
	 * writeback (zswpwb leaves out pages freed while being written).
	 */
	dev_out = atomic_load(&w.rt->swapstat[0].pswpout);
	expect(pool ? ctr(USWAP_SWAP_ENCRYPT) >= dev_out + ctr(USWAP_ZSWPWB) :
		      ctr(USWAP_SWAP_ENCRYPT) == dev_out,
	       "swap_encrypt is not every page written to the device");
	if (pool)
		expect(ctr(USWAP_ZSWPWB) > 0, "the pool wrote nothing back");
	else if (folio_bytes <= (16u << 10))
		expect(ctr(USWAP_SWAP_RA) > 0, "no readahead: its path was not tested");
	expect_key_locked("runtime");
	expect_log("failed authentication", 0);
}

/* Occurrences of MARKER in the swap file, read behind uswap's back. */
static uint64_t scan_device(void)
{
	static char buf[1 << 20];
	char path[64];
	uint64_t found = 0;
	off_t at = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", w.rt->swap[0].fd);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		const char *p = buf, *end = buf + n;

		while ((p = memmem(p, (size_t)(end - p), MARKER,
				   sizeof(MARKER) - 1))) {
			found++;
			p += sizeof(MARKER) - 1;
		}
		at += n;
	}
	close(fd);
	return found;
}

static void plaintext(bool encrypt, bool pool)
{
	struct uswap_options o;
	uint64_t found, used;
	unsigned tries;

	options(&o, encrypt);
	if (pool) {
		set_opt(&o, "zswap", "lz4");
		set_opt(&o, "zswap-max", "5");
	}
	w.marker = true;
	start(&o);
	workload();
	/* The pool writes back in the background: wait for some. */
	for (tries = 0; pool && !ctr(USWAP_ZSWPWB) && tries < 500; tries++)
		usleep(10000);
	found = scan_device();
	used = (uint64_t)swap_inuse_slots(&w.rt->swap[0]);
	printf("plaintext %s%s: %llu slots in use, %llu copies of the text on "
	       "the device; pswpout %llu zswpwb %llu\n", encrypt ? "on" : "off",
	       pool ? " pool" : "", (unsigned long long)used,
	       (unsigned long long)found, (unsigned long long)ctr(USWAP_PSWPOUT),
	       (unsigned long long)ctr(USWAP_ZSWPWB));
	expect(used > 0, "nothing is on the device");
	if (pool)
		expect(ctr(USWAP_ZSWPWB) > 0, "the pool wrote nothing back");
	else
		expect(ctr(USWAP_PSWPOUT) > 0, "reclaim wrote nothing");
	if (encrypt)
		expect(found == 0, "the program's text is on the device");
	else
		expect(found > 0, "the text is not found on a plain device: "
		       "the test cannot see it");
}

/*
 * The nth folio of the region that is swapped out wholly on the device
 * (not in the pool): its first page, and that page's slot.  -1 if none.
 */
static int64_t swapped_page(unsigned nth, uint32_t *slot)
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
		if (k < len / T_PAGE || nth--)
			continue;
		found = page;
		*slot = swp_offset(r->swp[page]);
	}
	program_memory_read_end();
	pthread_rwlock_unlock(&rt->op_lock);
	return found;
}

static void file_io(bool write, void *buf, uint32_t slot)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", w.rt->swap[0].fd);
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	n = write ? pwrite(fd, buf, T_PAGE, (off_t)slot * T_PAGE) :
		    pread(fd, buf, T_PAGE, (off_t)slot * T_PAGE);
	if (n != T_PAGE)
		t_fail("%s the swap file: %s", write ? "pwrite into" : "pread from",
		       strerror(errno));
	if (write)
		fsync(fd);
	close(fd);
}

static void tamper(const char *how)
{
	static char page[T_PAGE];
	struct uswap_options o;
	uint32_t slot = 0, other = 0;
	struct swap_crypt *sc;
	char line[512];
	int64_t p, q = -1;

	options(&o, true);
	if (!strcmp(how, "verify_off"))
		set_opt(&o, "verify", "off");
	start(&o);
	if (!(w.rt->features & UFFD_FEATURE_POISON))
		t_skip("UFFD_FEATURE_POISON is unavailable (kernel before 6.6): a lost folio kills the process");
	sc = w.rt->swap[0].crypt;
	workload();
	p = swapped_page(0, &slot);
	if (p < 0)
		t_fail("no folio is swapped out to tamper with");
	if (!strcmp(how, "byte") || !strcmp(how, "verify_off")) {
		file_io(false, page, slot);
		page[1234] ^= 0x01;
		file_io(true, page, slot);
	} else if (!strcmp(how, "tag")) {
		program_memory_read_begin();	/* see below */
		sc->seal[slot].tag[7] ^= 0x10;
		program_memory_read_end();
	} else if (!strcmp(how, "move") || !strcmp(how, "move_seal")) {
		/* Another swapped folio's first slot, copied over p's. */
		q = swapped_page(1, &other);
		if (q < 0)
			t_fail("no second swapped folio");
		file_io(false, page, other);
		file_io(true, page, slot);
		/*
		 * The fault thread reads the seal because of our own access (a
		 * page fault), an order ThreadSanitizer cannot see: hence the
		 * marks.
		 */
		program_memory_read_begin();
		if (!strcmp(how, "move_seal"))
			sc->seal[slot] = sc->seal[other];
		program_memory_read_end();
	} else {
		t_fail("tamper byte|tag|move|move_seal|verify_off");
	}
	w.may_lose = true;
	visit((uint64_t)p, 0);
	if (w.nr_lost != 1 || !w.lost[folio_of((uint64_t)p)])
		t_fail("page %lld read without SIGBUS after its slot was tampered with",
		       (long long)p);
	if (q >= 0) {
		visit((uint64_t)q, 0);	/* the slot copied from is intact */
		expect(w.nr_lost == 1, "the slot copied from was lost too");
	}
	check_all();		/* everything else is intact, the lost stays lost */
	workload();
	printf("tamper %s: slot %u; SIGBUS at page %lld only; swap_corrupt %llu\n",
	       how, slot, (long long)p,
	       (unsigned long long)ctr(USWAP_SWAP_CORRUPT));
	expect(ctr(USWAP_SWAP_CORRUPT) == 1, "swap_corrupt is not 1");
	snprintf(line, sizeof(line),
		 "swap device %s: slot %u failed authentication (XChaCha20-Poly1305)",
		 w.rt->swap[0].path, slot);
	expect_log(line, 1);
	expect_log("failed authentication", 1);
	expect_log("failed its checksum", 0);
}

static void fork_scenario(bool pool)
{
	struct uswap_options o;
	uint64_t out;
	pid_t pid;
	int st;

	options(&o, true);
	if (pool) {
		set_opt(&o, "zswap", "lz4");
		set_opt(&o, "zswap-max", "10");
	}
	start(&o);
	workload();
	out = ctr(USWAP_PSWPOUT);
	expect(out > 0, "nothing was swapped out before fork");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		expect(uswap_runtime_usable(w.rt), "the child lost its runtime");
		check_all();	/* the parent's slots, opened with its key */
		expect_key_locked("child");
		workload();	/* the child's own writes, sealed */
		printf("fork child: pswpin %llu pswpout %llu swap_encrypt %llu\n",
		       (unsigned long long)ctr(USWAP_PSWPIN),
		       (unsigned long long)ctr(USWAP_PSWPOUT),
		       (unsigned long long)ctr(USWAP_SWAP_ENCRYPT));
		expect(ctr(USWAP_SWAP_ENCRYPT) > 0, "the child sealed nothing");
		expect(ctr(USWAP_SWAP_CORRUPT) == 0, "the child lost data");
		fflush(NULL);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		t_fail("the child failed (status 0x%x)", st);
	check_all();		/* unchanged by the child */
	workload();
	counters("fork parent");
	expect(ctr(USWAP_SWAP_CORRUPT) == 0, "the parent lost data");
	expect_log("failed authentication", 0);
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	const char *a2 = argc > 2 ? argv[2] : "";
	const char *a3 = argc > 3 ? argv[3] : "";

	if (*a2 && (*a2 >= '0' && *a2 <= '9'))
		folio_bytes = t_size(a2);
	if (*a3 && (*a3 >= '0' && *a3 <= '9'))
		folio_bytes = t_size(a3);
	capture_log();
	if (!strcmp(s, "roundtrip"))
		roundtrip(false);
	else if (!strcmp(s, "pool"))
		roundtrip(true);
	else if (!strcmp(s, "plaintext") && (!strcmp(a2, "on") || !strcmp(a2, "off")))
		plaintext(!strcmp(a2, "on"), !strcmp(a3, "pool"));
	else if (!strcmp(s, "tamper"))
		tamper(a2);
	else if (!strcmp(s, "fork"))
		fork_scenario(!strcmp(a2, "pool") || !strcmp(a3, "pool"));
	else
		t_fail("usage: encrypt roundtrip|pool [FOLIO] | plaintext on|off [pool] | "
		       "tamper byte|tag|move|move_seal|verify_off [FOLIO] | fork [FOLIO] [pool]");
	uswap_runtime_destroy(w.rt);
	passed = true;
	return T_PASS;
}
