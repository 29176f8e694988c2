/* SPDX-License-Identifier: MIT */
/*
 * crypt.h - encryption at rest of swap slots (crypt.c): the runtime's key,
 * and each device's salt, nonce counter and per-slot tags; sealing and
 * opening one 4 KiB slot with XChaCha20-Poly1305 (libsodium).  swap_seal.c
 * decides when to seal (a bounce buffer per write context, in place for
 * the pool's writeback), swap_file.c opens after every read; swapon.c sets
 * it up with --encrypt on.
 */
#ifndef USWAP_CRYPT_H
#define USWAP_CRYPT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* crypto_aead_xchacha20poly1305_ietf_KEYBYTES, _ABYTES (crypt.c checks) */
#define CRYPT_KEY_BYTES		32
#define CRYPT_TAG_BYTES		16
#define CRYPT_SALT_BYTES	16	/* the device's part of every nonce */

/* The key: in one mlock'd page of private memory, never dumped. */
struct crypt_key;

/* What a slot's last write left beside it: the nonce's counter and the tag. */
struct crypt_seal {
	uint64_t seq;			/* 0: never sealed (fails to open) */
	uint8_t tag[CRYPT_TAG_BYTES];
};

/*
 * One device's encryption state, in shared memory (as the slot map and
 * the checksums: after fork, a slot one process sealed is opened by the
 * other).  key points to each process's own copy of the key, at the same
 * address in every process forked from the one that made it.
 *
 * seal[slot] is written by the thread that seals the slot (the slot is its
 * own until it publishes the slot to readers: swap_io.h) and read by the
 * threads that read it back.  next_seq is the only field written by
 * several threads (and processes) at once.
 */
struct swap_crypt {
	struct crypt_key *key;
	uint8_t salt[CRYPT_SALT_BYTES];	/* random, per device */
	_Atomic uint64_t next_seq;	/* next unused nonce counter */
	uint32_t nr_slots;
	size_t alloc_len;
	struct crypt_seal seal[];	/* nr_slots entries */
};

/*
 * A new random key (libsodium's CSPRNG: getrandom) with one reference, in
 * memory that is locked (mlock; RLIMIT_MEMLOCK may refuse: logged once,
 * and the key then merely is not kept out of the kernel's swap) and
 * excluded from core dumps.  A child after fork keeps the key (it shares
 * the devices) and locks its copy again (a fork handler: locks are not
 * inherited).  Calls sodium_init() once per process.  Runtime setup only:
 * 0, -ENOMEM, or -EIO when libsodium cannot start.
 */
int crypt_key_create(struct crypt_key **keyp);
void crypt_key_get(struct crypt_key *key);
/* Drop a reference; the last one wipes the key and frees its page. */
void crypt_key_put(struct crypt_key *key);
/* Is this process's copy of the key locked in memory? */
bool crypt_key_locked(const struct crypt_key *key);

/*
 * A device's state for nr_slots slots, holding a reference on key: 0 or
 * -ENOMEM.  crypt_dev_release() lets go of this process's part of it (the
 * mapping, the reference on its copy of the key) and leaves the shared
 * state to the processes that still use the device.
 */
int crypt_dev_create(struct crypt_key *key, uint32_t nr_slots,
		     struct swap_crypt **scp);
void crypt_dev_release(struct swap_crypt *sc);
/* Device states this process holds (page_io.c gives write contexts a
   bounce buffer when there are any). */
unsigned crypt_dev_count(void);

/* nr consecutive nonce counters, never handed out before on sc. */
static inline uint64_t crypt_seq_reserve(struct swap_crypt *sc, uint32_t nr)
{
	return atomic_fetch_add_explicit(&sc->next_seq, nr,
					 memory_order_relaxed);
}

/*
 * Encrypt the 4 KiB at src into dst (the same address is allowed) as the
 * contents of slot with nonce counter seq, and record seq and the tag in
 * sc->seal[slot].  The caller owns the slot (swap_io.h).
 */
void crypt_seal_slot(struct swap_crypt *sc, uint32_t slot, uint64_t seq,
		     void *dst, const void *src);
/*
 * Authenticate and decrypt in place the 4 KiB at buf, read from slot:
 * 0, or -EBADMSG when it is not what was sealed there (then buf is
 * zeroed, never half decrypted).
 */
int crypt_open_slot(const struct swap_crypt *sc, uint32_t slot, void *buf);

#endif /* USWAP_CRYPT_H */
