// SPDX-License-Identifier: MIT
/*
 * Description: encryption at rest (src/crypt.c) and the sealed I/O paths of
 * src/swap/swap_seal.c, on a real swap file in a temporary directory.
 *
 *  - one slot: what is sealed opens in place to the same bytes, and is not
 *    them; a flipped byte of the ciphertext, of the tag, a changed counter,
 *    the slot's ciphertext with its seal moved to another slot or to
 *    another device (same key), and a slot never sealed, all fail with
 *    -EBADMSG and give back zeros, never plaintext; two writes of the same
 *    page get different nonces and different ciphertexts;
 *  - the key's page is locked (VmLck, and "lo" in smaps) and not dumped
 *    ("dd"); a child after fork locks its copy again and still opens what
 *    its parent sealed; without CAP_IPC_LOCK under RLIMIT_MEMLOCK 0 the
 *    lock fails, one line says so, and sealing works all the same;
 *  - batched writes of random runs (1 to 1536 slots, more than a bounce
 *    buffer, iovecs cut at arbitrary bytes) through io_uring (depth 64 and
 *    4), the pread/pwrite fallback, no context (slot by slot), and
 *    transfers capped at a few pages (the short-transfer path, counted in
 *    swap_io_short): the caller's buffers are left as they were, the file
 *    holds no slot in plaintext, every slot reads back through
 *    swap_slots_check(), and swap_encrypt counts every slot;
 *  - a batch over an encrypting and a plain device; bad requests; writes
 *    failing in the middle of a round (injected EIO): each request gets
 *    its own result, the others read back; swap_write() seals
 *    its buffer in place.
 *
 * Usage: crypt [--seed N] [CASE...] (tests/unit/unitlib.h); exits 0 pass,
 * 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unitlib.h"
#include "crypt.h"
#include "base.h"
#include "prim.h"
#include "swap.h"
#include "swap_io.h"

#define DEV_BYTES	(32u << 20)
#define DEV_SLOTS	(DEV_BYTES / T_PAGE)
#define MAX_RUN		1536u	/* 6 MiB: more than a bounce buffer */
#define MAX_PIECES	6u
#define MAX_BATCH	16u

static uint64_t seed;		/* t_seed at the start of each case */
static char dir[] = "/tmp/uswap-crypt-XXXXXX";

/* What every case uses: a key, and buffers of a device's size. */
static struct {
	struct crypt_key *key;
	char *data, *copy, *buf;
} fx;

static void *xalloc(size_t len)
{
	void *p = aligned_alloc(T_PAGE, (len + T_PAGE - 1) & ~(size_t)(T_PAGE - 1));

	if (!p)
		t_fail("out of memory");
	return p;
}

/* A swap file of DEV_BYTES; encrypting under key when key is given. */
static void dev_open(struct swap_info *si, struct crypt_key *key)
{
	int err = swap_info_init(si, 0, DEV_BYTES);

	if (!err)
		err = swap_file_create(si, dir, DEV_BYTES);
	if (!err && key)
		err = crypt_dev_create(key, si->nr_slots, &si->crypt);
	if (err)
		t_fail("device in %s: %s", dir, strerror(-err));
}

static void dev_close(struct swap_info *si)
{
	crypt_dev_release(si->crypt);
	si->crypt = NULL;
	swap_file_close(si);
	swap_info_destroy(si);
}

static long status_kb(const char *field)
{
	char buf[8192], *p;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, field);
	return p ? strtol(p + strlen(field), NULL, 10) : -1;
}

/* The VmFlags of the mapping that starts at addr. */
static void vm_flags(const void *addr, char *out, size_t len)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;

	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)addr);
	*out = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(out, len, "%.200s", line + 8);
	}
	if (f)
		fclose(f);
}

/* --- one slot --- */

static void expect_fail(const struct swap_crypt *sc, uint32_t slot,
			const char *c, const char *what)
{
	static char buf[T_PAGE], zero[T_PAGE];

	memcpy(buf, c, T_PAGE);
	if (crypt_open_slot(sc, slot, buf) != -EBADMSG)
		t_fail("%s: opened", what);
	if (memcmp(buf, zero, T_PAGE))
		t_fail("%s: the buffer is not zeroed", what);
}

static void test_slot(void)
{
	struct crypt_key *key = fx.key;
	static char plain[T_PAGE], c[T_PAGE], buf[T_PAGE], c2[T_PAGE];
	struct swap_crypt *a, *b;
	struct crypt_seal keep;
	uint64_t seq;

	if (crypt_dev_create(key, 64, &a) || crypt_dev_create(key, 64, &b))
		t_fail("crypt_dev_create");
	if (!memcmp(a->salt, b->salt, CRYPT_SALT_BYTES))
		t_fail("two devices drew the same salt");
	t_fill(plain, 5, 0);
	seq = crypt_seq_reserve(a, 1);
	crypt_seal_slot(a, 5, seq, c, plain);
	if (!memcmp(c, plain, T_PAGE) || a->seal[5].seq != seq)
		t_fail("sealing left the plaintext, or no counter");
	memcpy(buf, c, T_PAGE);
	if (crypt_open_slot(a, 5, buf) || memcmp(buf, plain, T_PAGE))
		t_fail("a sealed slot does not open to its plaintext");

	c[100] ^= 1;
	expect_fail(a, 5, c, "a flipped ciphertext byte");
	c[100] ^= 1;
	a->seal[5].tag[3] ^= 0x80;
	expect_fail(a, 5, c, "a flipped tag byte");
	a->seal[5].tag[3] ^= 0x80;
	a->seal[5].seq++;
	expect_fail(a, 5, c, "another counter");
	a->seal[5].seq--;
	keep = a->seal[5];
	a->seal[6] = keep;		/* ciphertext and seal moved along */
	expect_fail(a, 6, c, "slot 5 copied to slot 6, seal and all");
	b->seal[5] = keep;
	expect_fail(b, 5, c, "slot 5 copied to another device, seal and all");
	expect_fail(a, 7, c, "a slot never sealed");
	memcpy(buf, c, T_PAGE);
	if (crypt_open_slot(a, 5, buf) || memcmp(buf, plain, T_PAGE))
		t_fail("the untouched slot no longer opens");

	/* In place, and a second write of the same page: a new nonce. */
	memcpy(c2, plain, T_PAGE);
	crypt_seal_slot(a, 5, crypt_seq_reserve(a, 1), c2, c2);
	if (a->seal[5].seq == seq || !memcmp(c2, c, T_PAGE))
		t_fail("a rewrite reused the nonce");
	if (crypt_open_slot(a, 5, c2) || memcmp(c2, plain, T_PAGE))
		t_fail("sealed in place, it does not open");
	crypt_dev_release(a);
	crypt_dev_release(b);
}

/* --- the key's memory --- */

static bool cap_drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	d[0].effective &= ~(1u << CAP_IPC_LOCK);
	d[0].permitted &= ~(1u << CAP_IPC_LOCK);
	d[0].inheritable &= ~(1u << CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d) == 0;
}

/* A child's view: locked again after fork, and opens the parent's slot. */
static int child_relocked(struct swap_crypt *sc, const char *c,
			  const char *plain)
{
	static char buf[T_PAGE];
	char flags[256];

	memcpy(buf, c, T_PAGE);
	vm_flags(sc->key, flags, sizeof(flags));
	if (!crypt_key_locked(sc->key) || !strstr(flags, " lo") ||
	    status_kb("VmLck:") < 4) {
		fprintf(stderr, "child: key not locked (VmFlags%s)\n", flags);
		return 1;
	}
	if (crypt_open_slot(sc, 1, buf) || memcmp(buf, plain, T_PAGE)) {
		fprintf(stderr, "child: the parent's slot does not open\n");
		return 1;
	}
	return 0;
}

/* Under RLIMIT_MEMLOCK 0 without CAP_IPC_LOCK: logged, and it works. */
static int child_unlocked(const char *plain)
{
	static char c[T_PAGE];
	const struct rlimit zero = { 0, 0 };
	struct crypt_key *key;
	struct swap_crypt *sc;

	if (!cap_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &zero))
		return 77;
	if (crypt_key_create(&key) || crypt_dev_create(key, 4, &sc))
		return 1;
	crypt_key_put(key);
	if (crypt_key_locked(key))
		return 77;	/* locked all the same: cannot test here */
	crypt_seal_slot(sc, 2, crypt_seq_reserve(sc, 1), c, plain);
	if (crypt_open_slot(sc, 2, c) || memcmp(c, plain, T_PAGE))
		return 1;
	crypt_dev_release(sc);
	return 0;
}

static int wait_child(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		t_fail("fork/waitpid: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_key_memory(void)
{
	struct crypt_key *key = fx.key;
	static char plain[T_PAGE], c[T_PAGE], log[4096];
	struct swap_crypt *sc;
	char flags[256];
	int fds[2], rc;
	ssize_t n;
	pid_t pid;

	if (crypt_dev_create(key, 4, &sc))
		t_fail("crypt_dev_create");
	vm_flags(sc->key, flags, sizeof(flags));
	if (!strstr(flags, " dd"))
		t_fail("the key's page is not MADV_DONTDUMP (VmFlags%s)", flags);
	if (!crypt_key_locked(key)) {
		printf("NOTE: the key is not locked here (RLIMIT_MEMLOCK %ld kB "
		       "locked already): lock checks skipped\n",
		       status_kb("VmLck:"));
	} else if (!strstr(flags, " lo") || status_kb("VmLck:") < 4) {
		t_fail("the key is said locked, but VmLck is %ld kB (VmFlags%s)",
		       status_kb("VmLck:"), flags);
	}
	t_fill(plain, 1, 3);
	crypt_seal_slot(sc, 1, crypt_seq_reserve(sc, 1), c, plain);

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child_relocked(sc, c, plain));
	if (crypt_key_locked(key) && wait_child(pid))
		t_fail("the child after fork (see above)");
	else if (!crypt_key_locked(key))
		wait_child(pid);

	if (pipe(fds))
		t_fail("pipe");
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		_exit(child_unlocked(plain));
	}
	close(fds[1]);
	n = read(fds[0], log, sizeof(log) - 1);
	log[n > 0 ? n : 0] = 0;
	close(fds[0]);
	rc = wait_child(pid);
	if (rc == 77)
		printf("NOTE: cannot drop CAP_IPC_LOCK here: the mlock failure "
		       "is not tested\n");
	else if (rc || !strstr(log, "encryption key: mlock failed"))
		t_fail("without a lock: exit %d, log \"%s\"", rc, log);
	else
		printf("RLIMIT_MEMLOCK 0: %s", strchr(log, ' ') + 1);
	crypt_dev_release(sc);
}

/* --- batched writes --- */

struct run {
	uint32_t off, nr;
};

static unsigned make_runs(struct run *runs)
{
	uint32_t at = 0;
	unsigned n = 0, k;

	for (;;) {
		uint32_t gap = (uint32_t)(t_rand(&seed) % 3);
		uint32_t len = 1 + (uint32_t)(t_rand(&seed) %
					      (t_rand(&seed) % 4 ? 64 : MAX_RUN));

		if (at + gap + len > DEV_SLOTS)
			break;
		runs[n++] = (struct run){ at + gap, len };
		at += gap + len;
	}
	for (k = n; k > 1; k--) {
		unsigned j = (unsigned)(t_rand(&seed) % k);
		struct run t = runs[k - 1];

		runs[k - 1] = runs[j];
		runs[j] = t;
	}
	return n;
}

/* Cut [base, base + len) into 1..MAX_PIECES iovecs at arbitrary bytes. */
static int split_iov(struct iovec *iov, char *base, size_t len)
{
	int n = 0;

	while (len) {
		size_t take = len;

		if (n + 1 < (int)MAX_PIECES && t_rand(&seed) % 2)
			take = 1 + t_rand(&seed) % len;
		iov[n++] = (struct iovec){ base, take };
		base += take;
		len -= take;
	}
	return n;
}

static void expect_sealed(const char *raw, const char *plain, uint32_t nr,
			  uint32_t off, const char *what)
{
	uint32_t k;

	for (k = 0; k < nr; k++)
		if (!memcmp(raw + (size_t)k * T_PAGE, plain + (size_t)k * T_PAGE,
			    T_PAGE))
			t_fail("%s: slot %u is in plaintext on the device", what,
			       off + k);
}

/* Read nr slots from off; check they are sealed, then that they open. */
static void read_back(struct swap_info *si, struct swap_io *rio, uint32_t off,
		      uint32_t nr, const char *plain, char *buf, const char *what)
{
	int err = swap_io_read(rio, si, off, buf, (size_t)nr * T_PAGE);

	if (err)
		t_fail("%s: read of %u+%u: %d", what, off, nr, err);
	if (si->crypt)
		expect_sealed(buf, plain, nr, off, what);
	if ((err = swap_slots_check(si, off, buf, nr)))
		t_fail("%s: slots %u+%u do not open: %d", what, off, nr, err);
	if (memcmp(buf, plain, (size_t)nr * T_PAGE))
		t_fail("%s: slots %u+%u do not read back", what, off, nr);
}

static void round_trip(struct swap_info *si, struct swap_io *wio,
		       struct swap_io *rio, char *data, char *copy, char *buf,
		       uint64_t v, const char *what)
{
	static struct run runs[DEV_SLOTS];
	static struct iovec iov[MAX_BATCH * MAX_PIECES];
	struct swap_io_req reqs[MAX_BATCH];
	const uint64_t sealed0 = swap_io_stat(SWAP_IO_SEALED);
	unsigned nr_runs = make_runs(runs), k, b, n;
	uint64_t slots = 0;
	uint32_t s;

	for (s = 0; s < DEV_SLOTS; s++)
		t_fill(data + (size_t)s * T_PAGE, s, v);
	memcpy(copy, data, DEV_BYTES);
	for (k = 0; k < nr_runs; k += n) {
		unsigned used = 0;

		n = 1 + (unsigned)(t_rand(&seed) % MAX_BATCH);
		n = MIN(n, nr_runs - k);
		for (b = 0; b < n; b++) {
			const struct run *r = &runs[k + b];
			int cnt = split_iov(&iov[used], data + (size_t)r->off * T_PAGE,
					    (size_t)r->nr * T_PAGE);

			reqs[b] = (struct swap_io_req){
				.si = si, .offset = r->off, .iov = &iov[used],
				.iovcnt = cnt, .len = (size_t)r->nr * T_PAGE,
				.result = 12345,
			};
			used += (unsigned)cnt;
			slots += r->nr;
		}
		if (swap_io_write_batch(wio, reqs, n))
			t_fail("%s: a batch failed", what);
		for (b = 0; b < n; b++)
			if (reqs[b].result)
				t_fail("%s: run %u: %d", what, reqs[b].offset,
				       reqs[b].result);
	}
	if (memcmp(data, copy, DEV_BYTES))
		t_fail("%s: the caller's buffers changed", what);
	if (swap_io_stat(SWAP_IO_SEALED) - sealed0 != slots)
		t_fail("%s: swap_encrypt counted %" PRIu64 " slots, %" PRIu64
		       " written", what, swap_io_stat(SWAP_IO_SEALED) - sealed0,
		       slots);
	for (k = 0; k < nr_runs; k++)
		read_back(si, rio, runs[k].off, runs[k].nr,
			  copy + (size_t)runs[k].off * T_PAGE, buf, what);
}

static struct swap_io *io_new(unsigned depth, bool fallback, size_t cap)
{
	struct swap_io *io;

	if (fallback)
		setenv("USWAP_NO_IO_URING", "1", 1);
	io = swap_io_create(depth);
	unsetenv("USWAP_NO_IO_URING");
	if (!io)
		t_fail("swap_io_create");
	if (cap)
		swap_io_set_max_bytes(io, cap);
	return io;
}

static void test_round_trips(void)
{
	struct crypt_key *key = fx.key;
	char *data = fx.data, *copy = fx.copy, *buf = fx.buf;
	struct swap_io *uring, *small, *fb, *capped, *capped_fb;
	uint64_t short0 = swap_io_stat(SWAP_IO_SHORT), v = 0;
	struct swap_info si;

	/* Contexts made while a device encrypts get a bounce buffer. */
	dev_open(&si, key);
	uring = io_new(64, false, 0);
	small = io_new(4, false, 0);
	fb = io_new(64, true, 0);
	capped = io_new(16, false, 3 * T_PAGE);
	capped_fb = io_new(16, true, 5 * T_PAGE);
	printf("swap file: %s, %s\n", si.direct ? "O_DIRECT" : "buffered",
	       swap_io_uring(uring) ? "io_uring" : "no io_uring here");
	round_trip(&si, uring, uring, data, copy, buf, ++v, "io_uring");
	round_trip(&si, small, fb, data, copy, buf, ++v, "io_uring depth 4");
	round_trip(&si, fb, fb, data, copy, buf, ++v, "fallback");
	round_trip(&si, NULL, NULL, data, copy, buf, ++v, "no context");
	if (swap_io_stat(SWAP_IO_SHORT) != short0)
		t_fail("swap_io_short moved without a short transfer");
	round_trip(&si, capped, capped, data, copy, buf, ++v, "io_uring, capped");
	round_trip(&si, capped_fb, capped_fb, data, copy, buf, ++v,
		   "fallback, capped");
	printf("round trips: swap_encrypt %" PRIu64 ", swap_io_short %" PRIu64 "\n",
	       swap_io_stat(SWAP_IO_SEALED), swap_io_stat(SWAP_IO_SHORT) - short0);
	if (swap_io_stat(SWAP_IO_SHORT) == short0)
		t_fail("capped transfers were not counted in swap_io_short");
	dev_close(&si);
	swap_io_destroy(uring);
	swap_io_destroy(small);
	swap_io_destroy(fb);
	swap_io_destroy(capped);
	swap_io_destroy(capped_fb);
}

/* --- mixed batches, errors, the pool's writeback --- */

static void test_mixed(void)
{
	struct crypt_key *key = fx.key;
	char *data = fx.data, *buf = fx.buf;
	struct swap_info enc, plain;
	struct iovec iov[6];
	struct swap_io_req reqs[6];
	struct swap_io *io;
	unsigned k;

	dev_open(&enc, key);
	dev_open(&plain, NULL);
	io = io_new(8, false, 0);
	for (k = 0; k < 1200; k++)
		t_fill(data + (size_t)k * T_PAGE, k, 9);
	iov[0] = (struct iovec){ data, 700 * T_PAGE };
	iov[1] = (struct iovec){ data + 700 * T_PAGE, 10 * T_PAGE };
	iov[2] = (struct iovec){ data + 710 * T_PAGE, 400 * T_PAGE };
	iov[3] = (struct iovec){ data, 3 * T_PAGE + 1 };	/* not whole */
	iov[4] = (struct iovec){ data, 2 * T_PAGE };		/* outside */
	iov[5] = (struct iovec){ data + 1110 * T_PAGE, 90 * T_PAGE };
	reqs[0] = (struct swap_io_req){ &enc, 100, &iov[0], 1, iov[0].iov_len, 1 };
	reqs[1] = (struct swap_io_req){ &plain, 100, &iov[1], 1, iov[1].iov_len, 1 };
	reqs[2] = (struct swap_io_req){ &enc, 800, &iov[2], 1, iov[2].iov_len, 1 };
	reqs[3] = (struct swap_io_req){ &enc, 2000, &iov[3], 1, iov[3].iov_len, 1 };
	reqs[4] = (struct swap_io_req){ &enc, DEV_SLOTS - 1, &iov[4], 1, iov[4].iov_len, 1 };
	reqs[5] = (struct swap_io_req){ &enc, 3000, &iov[5], 1, iov[5].iov_len, 1 };
	if (swap_io_write_batch(io, reqs, 6) != -EINVAL)
		t_fail("a bad request did not fail the batch");
	if (reqs[0].result || reqs[1].result || reqs[2].result || reqs[5].result ||
	    reqs[3].result != -EINVAL || reqs[4].result != -EINVAL)
		t_fail("mixed batch: results %d %d %d %d %d %d", reqs[0].result,
		       reqs[1].result, reqs[2].result, reqs[3].result,
		       reqs[4].result, reqs[5].result);
	read_back(&enc, io, 100, 700, data, buf, "mixed, encrypting device");
	read_back(&plain, io, 100, 10, data + 700 * T_PAGE, buf, "mixed, plain device");
	read_back(&enc, io, 800, 400, data + 710 * T_PAGE, buf, "mixed, encrypting device");
	read_back(&enc, io, 3000, 90, data + 1110 * T_PAGE, buf, "mixed, last");

	/* The pool's writeback: its own buffer, sealed in place. */
	memcpy(buf, data, 16 * T_PAGE);
	iov[0] = (struct iovec){ buf, 16 * T_PAGE };
	if (swap_write(&enc, 5000, iov, 1, 16 * T_PAGE))
		t_fail("swap_write");
	expect_sealed(buf, data, 16, 5000, "swap_write's buffer");
	read_back(&enc, NULL, 5000, 16, data, buf, "swap_write");
	dev_close(&enc);
	dev_close(&plain);
	swap_io_destroy(io);
}

/* Every 3rd transfer to the device fails: per-request results hold. */
static void test_write_errors(void)
{
	struct crypt_key *key = fx.key;
	char *data = fx.data, *buf = fx.buf;
	struct swap_io_req reqs[8];
	struct iovec iov[8];
	struct swap_io *io;
	struct swap_info si;
	unsigned k, ok = 0;

	dev_open(&si, key);
	/*
	 * Whole transfers (no cap): each request is one, or a few when the
	 * kernel writes short, so every 3rd failing leaves some requests
	 * whole.  (With transfers capped, every request had a 3rd.)
	 */
	io = io_new(4, false, 0);
	for (k = 0; k < 8 * 300; k++)
		t_fill(data + (size_t)k * T_PAGE, k, 11);
	setenv("USWAP_INJECT", "write_eio=0:3", 1);
	if (prim_inject_init(&si.fd, 1))
		t_fail("prim_inject_init");
	for (k = 0; k < 8; k++) {
		iov[k] = (struct iovec){ data + (size_t)k * 300 * T_PAGE, 300 * T_PAGE };
		reqs[k] = (struct swap_io_req){ &si, k * 400, &iov[k], 1,
						iov[k].iov_len, 1 };
	}
	swap_io_write_batch(io, reqs, 8);
	unsetenv("USWAP_INJECT");
	prim_inject_init(&si.fd, 1);
	for (k = 0; k < 8; k++) {
		if (reqs[k].result && reqs[k].result != -EIO)
			t_fail("request %u: %d, expected 0 or -EIO", k, reqs[k].result);
		if (reqs[k].result)
			continue;
		ok++;
		read_back(&si, io, k * 400, 300, iov[k].iov_base, buf,
			  "after injected errors");
	}
	printf("injected write errors: %u of 8 requests failed, the others read back\n",
	       8 - ok);
	if (ok == 8 || ok == 0)
		t_fail("every request %s", ok ? "succeeded" : "failed");
	dev_close(&si);
	swap_io_destroy(io);
}

static void remove_dir(void)
{
	rmdir(dir);
}

static void setup(void)
{
	if (!mkdtemp(dir))
		t_fail("mkdtemp: %s", strerror(errno));
	atexit(remove_dir);
	if (crypt_key_create(&fx.key))
		t_fail("crypt_key_create");
	fx.data = xalloc(DEV_BYTES);
	fx.copy = xalloc(DEV_BYTES);
	fx.buf = xalloc((size_t)MAX_RUN * T_PAGE);
}

static void teardown(void)
{
	crypt_key_put(fx.key);
	if (crypt_dev_count())
		t_fail("%u device states left", crypt_dev_count());
	free(fx.data);
	free(fx.copy);
	free(fx.buf);
}

static const struct t_case cases[] = {
	T_CASE(slot, "a sealed slot opens to its bytes; any tampering fails, gives zeros"),
	T_CASE(key_memory, "the key's page is locked and not dumped, also after fork"),
	T_CASE(round_trips, "random batched runs through io_uring, fallback, capped transfers"),
	T_CASE(mixed, "a batch over an encrypting and a plain device; bad requests"),
	T_CASE(write_errors, "writes failing in a round: each request its own result"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = setup, .teardown = teardown,
		.seed = 0x5eed, .rng = &seed,
	});
}
