/* SPDX-License-Identifier: MIT */
/*
 * base.h - the few macros every file of the library may use: page and
 * folio sizes, branch hints, EXPORT, MIN/MAX, and the marks around reads
 * of the program's memory.  It includes nothing, so that anything may
 * include it.
 */
#ifndef USWAP_BASE_H
#define USWAP_BASE_H

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1ul << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define MAX_FOLIO_SHIFT	21
#define MAX_FOLIO_PAGES	(1u << (MAX_FOLIO_SHIFT - PAGE_SHIFT))

/*
 * Reclaim reads a victim's pages in user space (to compress them) while
 * the program's threads may have written them just before: the order is
 * made by write-protect, in the kernel, which ThreadSanitizer cannot see.
 * Such reads go between these marks.
 */
#if defined(__SANITIZE_THREAD__)
#define USWAP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define USWAP_TSAN 1
#endif
#endif
#ifdef USWAP_TSAN
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define program_memory_read_begin()	__tsan_ignore_thread_begin()
#define program_memory_read_end()	__tsan_ignore_thread_end()
#else
#define program_memory_read_begin()	do { } while (0)
#define program_memory_read_end()	do { } while (0)
#endif

#define EXPORT		__attribute__((visibility("default")))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

#endif /* USWAP_BASE_H */
