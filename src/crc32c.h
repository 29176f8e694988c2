/* SPDX-License-Identifier: MIT */
/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum that guards compressed
 * objects and slot contents: none of the compressed formats uswap writes
 * detects every corruption by itself.
 */
#ifndef USWAP_CRC32C_H
#define USWAP_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Extend crc (0 to start) over len bytes of buf: crc32c(0, "123456789", 9)
 * is 0xE3069283, and crc32c(crc32c(0, a, n), a + n, m) == crc32c(0, a, n + m).
 * Uses the SSE4.2 crc32 instruction when the CPU has it.
 */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* The same, always by table (for tests, and CPUs without SSE4.2). */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* True when crc32c() uses the crc32 instruction. */
bool crc32c_hw_available(void);

#endif /* USWAP_CRC32C_H */
