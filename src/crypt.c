// SPDX-License-Identifier: MIT
/*
 * crypt.c - encryption at rest of what goes to a swap device (--encrypt on):
 * the key, and the authenticated encryption of each 4 KiB slot with
 * XChaCha20-Poly1305 (libsodium, crypto_aead_xchacha20poly1305_ietf_*
 * in detached mode).
 *
 * What is protected.  Everything uswap writes to a swap file or a block
 * device: the program's memory, once it is cold, outlives the process on a
 * disk that others may read later, or that another user may be able to
 * write now.  With encryption on, the device holds ciphertext only, and a
 * slot whose bytes were changed, or copied from another slot or another
 * device, fails authentication when it is read back: it is never given to
 * the program (SIGBUS at that folio, swap_corrupt, as a failed checksum:
 * docs/reliability.md).  The compressed pool is memory, not "at rest", and
 * stays plain, as the rest of the program's memory does; so do the
 * metadata below, which are in memory too.  Not protected: a reader of the
 * process's memory (it has the key), and a device that gives back an
 * older ciphertext of the same slot is caught only because the metadata
 * (in memory) name the last write.
 *
 * Key.  32 random bytes per runtime (getrandom, through libsodium's
 * randombytes_buf), alone in one page of private memory that is locked
 * (mlock: never written to the kernel's own swap) and marked
 * MADV_DONTDUMP (never in a core dump), wiped (sodium_memzero) when the
 * last device lets go of it.  The key lives as long as the runtime's
 * devices, and dies with the process: nothing is ever meant to read a
 * device after that, so nothing persists the key.  A child after fork
 * shares the devices and the slots its parent wrote, so it keeps the same
 * key: its copy of the page is inherited, but the lock is not, and a fork
 * handler locks it again.  When RLIMIT_MEMLOCK refuses the lock (and the
 * process lacks CAP_IPC_LOCK), one line says so and encryption goes on:
 * the key then could reach the kernel's swap, if the machine has any.
 *
 * Nonces.  One key serves every device of the runtime, and a nonce must
 * never be used twice under it.  A nonce is 24 bytes: the device's salt (16
 * random bytes, drawn when the device is set up) and a 64-bit counter
 * (little-endian) from the device's next_seq, which every writer of every
 * process of the tree draws from (shared memory, one atomic add per run
 * of slots).  The counter never wraps (2^64 slots at 4 KiB is 64 ZiB);
 * the salts of two devices collide with probability 2^-128.  The counter
 * is stored per slot beside the tag: 24 bytes of metadata per 4 KiB slot
 * (0.6%), in shared memory, MAP_NORESERVE, touched only where slots are
 * used.
 *
 * Associated data: the device's salt and the slot number (64-bit,
 * little-endian).  The nonce already differs per device and per write; the
 * associated data binds the ciphertext to its place, so that even with its
 * seq and tag copied along, a slot moved elsewhere fails to open.
 *
 * Ciphertext is as long as the plaintext: slots, clusters and I/O sizes
 * do not change, and O_DIRECT stays aligned.  The tag (16 bytes) and seq
 * (8) are the per-slot metadata; the crc32c array is not kept beside them
 * (the tag is a stronger check of the same bytes), whatever --verify says.
 *
 * Cost: HChaCha20 to derive each slot's subkey (one block), ChaCha20 over
 * 4 KiB and Poly1305 over it, on every write and every read from a device;
 * docs/reliability.md has the measurements.  sodium_init() runs once, at
 * runtime setup (it picks the CPU's fastest implementations); nothing here
 * allocates or takes a lock on the fault path.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crypt.h"
#include "base.h"
#include "log.h"
#include "prim.h"
#include "swap.h"

#define MAX_KEYS	16	/* live keys a fork handler re-locks */

_Static_assert(CRYPT_KEY_BYTES == crypto_aead_xchacha20poly1305_ietf_KEYBYTES,
	       "key size");
_Static_assert(CRYPT_TAG_BYTES == crypto_aead_xchacha20poly1305_ietf_ABYTES,
	       "tag size");
_Static_assert(CRYPT_SALT_BYTES + 8 == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	       "nonce: salt and counter");

struct crypt_key {
	uint8_t bytes[CRYPT_KEY_BYTES];
	_Atomic unsigned refs;		/* this process's references */
	bool locked;			/* mlock'd in this process */
};

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status;
static _Atomic(struct crypt_key *) live_keys[MAX_KEYS];
static _Atomic unsigned nr_devs;
static bool logged_lock, logged_registry;

/*
 * mlock as a raw system call (prim_mlock2): sanitizers replace the libc
 * symbol with one that does nothing (sodium_mlock would go through it),
 * and the lock is the point.
 */
static void key_lock(struct crypt_key *key)
{
	int err = prim_mlock2(key, PAGE_SIZE, 0);

	key->locked = !err;
	if (!key->locked)
		uswap_log_once(&logged_lock, "encryption key: mlock failed (%s): "
			       "it is not kept out of the kernel's swap (raise "
			       "RLIMIT_MEMLOCK, ulimit -l)", strerror(-err));
}

/* Child after fork: locks are not inherited; the key is. */
static void relock_child(void)
{
	unsigned k;

	for (k = 0; k < MAX_KEYS; k++) {
		struct crypt_key *key = atomic_load(&live_keys[k]);

		if (key)
			key_lock(key);
	}
}

static void sodium_start(void)
{
	sodium_status = sodium_init() < 0 ? -EIO : 0;
	if (!sodium_status)
		pthread_atfork(NULL, NULL, relock_child);
}

static void key_register(struct crypt_key *key)
{
	unsigned k;

	for (k = 0; k < MAX_KEYS; k++) {
		struct crypt_key *none = NULL;

		if (atomic_compare_exchange_strong(&live_keys[k], &none, key))
			return;
	}
	uswap_log_once(&logged_registry, "encryption key: more than %u runtimes "
		       "encrypt: a child after fork does not lock this one",
		       MAX_KEYS);
}

static void key_unregister(struct crypt_key *key)
{
	unsigned k;

	for (k = 0; k < MAX_KEYS; k++) {
		struct crypt_key *mine = key;

		atomic_compare_exchange_strong(&live_keys[k], &mine, NULL);
	}
}

int crypt_key_create(struct crypt_key **keyp)
{
	struct crypt_key *key;

	pthread_once(&sodium_once, sodium_start);
	if (sodium_status) {
		uswap_log("encryption: libsodium failed to start");
		return sodium_status;
	}
	key = prim_alloc(PAGE_SIZE);
	if (!key)
		return -ENOMEM;
	prim_madvise(key, PAGE_SIZE, MADV_DONTDUMP);
	key_lock(key);
	randombytes_buf(key->bytes, sizeof(key->bytes));
	atomic_store(&key->refs, 1);
	key_register(key);
	*keyp = key;
	return 0;
}

void crypt_key_get(struct crypt_key *key)
{
	atomic_fetch_add(&key->refs, 1);
}

void crypt_key_put(struct crypt_key *key)
{
	if (!key || atomic_fetch_sub(&key->refs, 1) != 1)
		return;
	key_unregister(key);
	sodium_memzero(key, PAGE_SIZE);
	prim_free(key, PAGE_SIZE);	/* munmap unlocks it */
}

bool crypt_key_locked(const struct crypt_key *key)
{
	return key && key->locked;
}

int crypt_dev_create(struct crypt_key *key, uint32_t nr_slots,
		     struct swap_crypt **scp)
{
	size_t len = sizeof(struct swap_crypt) +
		     (size_t)nr_slots * sizeof(struct crypt_seal);
	struct swap_crypt *sc = prim_alloc_shared(len);

	if (!sc)
		return -ENOMEM;
	crypt_key_get(key);
	sc->key = key;
	randombytes_buf(sc->salt, sizeof(sc->salt));
	atomic_store(&sc->next_seq, 1);		/* seq 0: never sealed */
	sc->nr_slots = nr_slots;
	sc->alloc_len = len;
	atomic_fetch_add(&nr_devs, 1);
	*scp = sc;
	return 0;
}

void crypt_dev_release(struct swap_crypt *sc)
{
	if (!sc)
		return;
	crypt_key_put(sc->key);
	atomic_fetch_sub(&nr_devs, 1);
	prim_free(sc, sc->alloc_len);
}

unsigned crypt_dev_count(void)
{
	return atomic_load_explicit(&nr_devs, memory_order_relaxed);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The nonce of a write: salt, then the counter. */
static void make_nonce(const struct swap_crypt *sc, uint64_t seq,
		       uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES])
{
	memcpy(nonce, sc->salt, CRYPT_SALT_BYTES);
	put_le64(nonce + CRYPT_SALT_BYTES, seq);
}

/* The associated data: where the ciphertext belongs (device, slot). */
static void make_ad(const struct swap_crypt *sc, uint32_t slot,
		    uint8_t ad[CRYPT_SALT_BYTES + 8])
{
	memcpy(ad, sc->salt, CRYPT_SALT_BYTES);
	put_le64(ad + CRYPT_SALT_BYTES, slot);
}

void crypt_seal_slot(struct swap_crypt *sc, uint32_t slot, uint64_t seq,
		     void *dst, const void *src)
{
	uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	uint8_t ad[CRYPT_SALT_BYTES + 8];
	struct crypt_seal *s = &sc->seal[slot];

	assert(slot < sc->nr_slots && seq);
	make_nonce(sc, seq, nonce);
	make_ad(sc, slot, ad);
	crypto_aead_xchacha20poly1305_ietf_encrypt_detached(dst, s->tag, NULL,
			src, SWAP_SLOT_SIZE, ad, sizeof(ad), NULL, nonce,
			sc->key->bytes);
	s->seq = seq;
}

int crypt_open_slot(const struct swap_crypt *sc, uint32_t slot, void *buf)
{
	uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	uint8_t ad[CRYPT_SALT_BYTES + 8];
	const struct crypt_seal *s = &sc->seal[slot];

	assert(slot < sc->nr_slots);
	if (!s->seq) {
		memset(buf, 0, SWAP_SLOT_SIZE);
		return -EBADMSG;
	}
	make_nonce(sc, s->seq, nonce);
	make_ad(sc, slot, ad);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt_detached(buf, NULL, buf,
			SWAP_SLOT_SIZE, s->tag, ad, sizeof(ad), nonce,
			sc->key->bytes))
		return -EBADMSG;
	return 0;
}
