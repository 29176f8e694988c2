/* SPDX-License-Identifier: MIT */
/*
 * ilist.h - doubly linked lists of array elements, linked by index.
 *
 * uswap keeps its per-object state in flat arrays (a region's folios, the
 * zswap entries, a swap device's clusters), mapped once and never moved,
 * and strings the elements of an array into lists: the LRU lists, the
 * zswap LRU, the cluster lists.  A link is a 32-bit index into the array
 * rather than a pointer: half the size, valid in any process that maps the
 * array, and an array whose pages were never touched can stand for a list
 * (the implicit links, below).
 *
 *	struct ilist		the list: first, last, nr (its length)
 *	struct ilist_link	next and prev, embedded in each element
 *	struct ilist_array	where the links are: element i's are at
 *				base + i * stride + offset
 *
 *	    first                                   last
 *	      |                                       |
 *	      v                                       v
 *	  [ elem 7 ] --next--> [ elem 2 ] --next--> [ elem 9 ] --next--> NIL
 *	NIL <--prev--           <--prev--            <--prev--
 *
 * The element array is passed to every operation that follows a link
 * (struct ilist_array, made by ILIST_ARRAY() from the array, its length
 * and the name of the link member): the list itself holds no pointer, so
 * that it can live in memory shared between processes that map the array
 * at different addresses.  Every function is static inline, and a user
 * passes an ILIST_ARRAY() built from constants (the element size, the
 * member's offset): once inlined, an operation compiles to the loads and
 * stores a list written by hand for that array would make.
 *
 * An element is on at most one list of an array at a time, and which one
 * is the caller's to know (a flag, a field naming the list): ilist_del()
 * is told the list.  An element off every list has stale links, which
 * nothing reads; the links may even be reused for something else meanwhile
 * (a folio keeps its shadow in prev while swapped out).
 *
 * Implicit links (ILIST_ARRAY_IMPLICIT()).  The links are stored as the
 * index + 1, ILIST_NIL as itself, and 0 stands for the neighbours in index
 * order: next i + 1 and prev i - 1 (ILIST_NIL past either end).  A zeroed
 * array is then one list 0, 1, ..., nr - 1 (ilist_init_all()) with no
 * write to it, so that its pages are touched only where elements move.
 * Every operation writes the links it changes explicitly, of the element
 * and of its neighbours, so an element never touched keeps links that its
 * implicit value describes correctly.
 *
 * Locking is the caller's: the list and the links of its elements change
 * under whatever lock the user documents for them.
 */
#ifndef USWAP_ILIST_H
#define USWAP_ILIST_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ILIST_NIL	UINT32_MAX	/* no element: the end of a list */

/* A list: its first and last element (ILIST_NIL when empty), its length. */
struct ilist {
	uint32_t first, last;
	uint32_t nr;
};

/* The links of an element, embedded in it (stored encoded if implicit). */
struct ilist_link {
	uint32_t next, prev;
};

/* The element array of a list: see ILIST_ARRAY(). */
struct ilist_array {
	void *base;		/* element 0 */
	size_t stride;		/* bytes from an element to the next */
	size_t offset;		/* of the struct ilist_link in an element */
	uint32_t nr;		/* elements: indices are 0 .. nr - 1 */
	bool implicit;		/* links stored as index + 1, 0 implicit */
};

/*
 * The array of nr elements at base (a pointer to the element type), whose
 * links are the struct ilist_link member `member`.  The comparison of
 * pointers only checks the member's type (a compiler warning otherwise).
 */
#define ILIST_ARRAY_(base, nr, member, implicit)			\
	((struct ilist_array){						\
		(base), sizeof(*(base)),				\
		offsetof(__typeof__(*(base)), member) +			\
			0 * sizeof(&(base)->member ==			\
				   (struct ilist_link *)0),		\
		(nr), (implicit) })
#define ILIST_ARRAY(base, nr, member)	ILIST_ARRAY_(base, nr, member, false)
/* The same, with implicit links (see the top of the file). */
#define ILIST_ARRAY_IMPLICIT(base, nr, member)				\
	ILIST_ARRAY_(base, nr, member, true)

static inline struct ilist_link *ilist_link_of(struct ilist_array a,
					       uint32_t i)
{
	assert(i < a.nr);
	return (struct ilist_link *)((char *)a.base + (size_t)i * a.stride +
				     a.offset);
}

/* Decode a stored link of element i (next: the next one, else the prev). */
static inline uint32_t ilist_decode(struct ilist_array a, uint32_t i,
				    uint32_t raw, bool next)
{
	if (!a.implicit || raw == ILIST_NIL)
		return raw;
	if (raw)
		return raw - 1;
	if (next)
		return i + 1 < a.nr ? i + 1 : ILIST_NIL;
	return i ? i - 1 : ILIST_NIL;
}

static inline uint32_t ilist_encode(struct ilist_array a, uint32_t to)
{
	if (!a.implicit || to == ILIST_NIL)
		return to;
	return to + 1;
}

/* The element after i on its list, or ILIST_NIL. */
static inline uint32_t ilist_next(struct ilist_array a, uint32_t i)
{
	return ilist_decode(a, i, ilist_link_of(a, i)->next, true);
}

/* The element before i on its list, or ILIST_NIL. */
static inline uint32_t ilist_prev(struct ilist_array a, uint32_t i)
{
	return ilist_decode(a, i, ilist_link_of(a, i)->prev, false);
}

static inline void ilist_set_next(struct ilist_array a, uint32_t i,
				  uint32_t to)
{
	ilist_link_of(a, i)->next = ilist_encode(a, to);
}

static inline void ilist_set_prev(struct ilist_array a, uint32_t i,
				  uint32_t to)
{
	ilist_link_of(a, i)->prev = ilist_encode(a, to);
}

/* An empty list. */
static inline void ilist_init(struct ilist *l)
{
	l->first = l->last = ILIST_NIL;
	l->nr = 0;
}

/*
 * The list of every element of a, in index order, as the links of a zeroed
 * array with implicit links already say: nothing of a is written.
 */
static inline void ilist_init_all(struct ilist *l, struct ilist_array a)
{
	assert(a.implicit && a.nr > 0);
	l->first = 0;
	l->last = a.nr - 1;
	l->nr = a.nr;
}

static inline bool ilist_empty(const struct ilist *l)
{
	return l->nr == 0;
}

/* The first (newest, for the LRU lists) element, or ILIST_NIL. */
static inline uint32_t ilist_first(const struct ilist *l)
{
	return l->first;
}

/* The last (oldest) element, or ILIST_NIL. */
static inline uint32_t ilist_last(const struct ilist *l)
{
	return l->last;
}

/*
 * Link element i, on no list, between prev and next, neighbours on l
 * (either may be ILIST_NIL: an end of the list).
 */
static inline void ilist_link_between(struct ilist *l, struct ilist_array a,
				      uint32_t i, uint32_t prev, uint32_t next)
{
	ilist_set_prev(a, i, prev);
	ilist_set_next(a, i, next);
	if (prev == ILIST_NIL)
		l->first = i;
	else
		ilist_set_next(a, prev, i);
	if (next == ILIST_NIL)
		l->last = i;
	else
		ilist_set_prev(a, next, i);
	l->nr++;
}

/* Put element i, on no list, first on l. */
static inline void ilist_add_head(struct ilist *l, struct ilist_array a,
				  uint32_t i)
{
	ilist_link_between(l, a, i, ILIST_NIL, l->first);
}

/* Put element i, on no list, last on l. */
static inline void ilist_add_tail(struct ilist *l, struct ilist_array a,
				  uint32_t i)
{
	ilist_link_between(l, a, i, l->last, ILIST_NIL);
}

/* Put element i, on no list, right after pos on l (first if ILIST_NIL). */
static inline void ilist_add_after(struct ilist *l, struct ilist_array a,
				   uint32_t pos, uint32_t i)
{
	ilist_link_between(l, a, i, pos,
			   pos == ILIST_NIL ? l->first : ilist_next(a, pos));
}

/* Take element i off l, the list it is on.  Its links are left stale. */
static inline void ilist_del(struct ilist *l, struct ilist_array a,
			     uint32_t i)
{
	const uint32_t prev = ilist_prev(a, i), next = ilist_next(a, i);

	assert(l->nr > 0);
	if (prev == ILIST_NIL)
		l->first = next;
	else
		ilist_set_next(a, prev, next);
	if (next == ILIST_NIL)
		l->last = prev;
	else
		ilist_set_prev(a, next, prev);
	l->nr--;
}

/* Move element i from list from (where it is) to the head of list to. */
static inline void ilist_move_head(struct ilist *from, struct ilist *to,
				   struct ilist_array a, uint32_t i)
{
	ilist_del(from, a, i);
	ilist_add_head(to, a, i);
}

/* Move element i from list from (where it is) to the tail of list to. */
static inline void ilist_move_tail(struct ilist *from, struct ilist *to,
				   struct ilist_array a, uint32_t i)
{
	ilist_del(from, a, i);
	ilist_add_tail(to, a, i);
}

/* Take the first element off l and return it; ILIST_NIL if l is empty. */
static inline uint32_t ilist_pop_head(struct ilist *l, struct ilist_array a)
{
	const uint32_t i = l->first;

	if (i != ILIST_NIL)
		ilist_del(l, a, i);
	return i;
}

/* Take the last element off l and return it; ILIST_NIL if l is empty. */
static inline uint32_t ilist_pop_tail(struct ilist *l, struct ilist_array a)
{
	const uint32_t i = l->last;

	if (i != ILIST_NIL)
		ilist_del(l, a, i);
	return i;
}

/* Walk l from first to last: i is each element in turn. */
#define ilist_for_each(i, l, a)						\
	for ((i) = (l)->first; (i) != ILIST_NIL; (i) = ilist_next((a), (i)))

/*
 * Is l well formed: every link in range, each element's prev the one
 * before it, last the last one reached, nr the number walked, no cycle?
 * A debug check: it walks the whole list (for asserts and tests).
 */
static inline bool ilist_is_valid(const struct ilist *l, struct ilist_array a)
{
	uint32_t i = l->first, prev = ILIST_NIL, n = 0;

	while (i != ILIST_NIL) {
		if (i >= a.nr || n >= a.nr || ilist_prev(a, i) != prev)
			return false;
		prev = i;
		i = ilist_next(a, i);
		n++;
	}
	return l->last == prev && l->nr == n;
}

#endif /* USWAP_ILIST_H */
