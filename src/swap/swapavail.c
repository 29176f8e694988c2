// SPDX-License-Identifier: MIT
/*
 * swapavail.c - which swap device a folio goes to: the kernel's priority
 * model, with one availability list per NUMA node.
 *
 * One of the three parts of several swap devices (swapdev.h), beside
 * swapspec.c (the device specs) and topology.c (the node of a device).
 * This rebuilds the device-selection half of the kernel's mm/swapfile.c
 * (swapon's priority, setup_swap_info(), swap_avail_heads and the device
 * loop of the swap allocator).  The slot allocator of one device is
 * swapfile.c; this file only decides which device a folio goes to.
 *
 * The kernel's priority model
 * ---------------------------
 * Every swap device has a priority.  The administrator may give one, from
 * 0 to 32767 (swapon -p); a device given none is numbered below every
 * user priority, in the order the devices were enabled: the first gets -2,
 * the next -3, and so on (the kernel counts a global "least priority"
 * down from -1).  The value -1 itself is never handed out: it is kept for
 * promotion, below.
 *
 * The devices that still have free space sit on priority-ordered lists,
 * and there is one list per NUMA node.  A device appears on every node's
 * list, but not always with the same priority: on the list of the node the
 * device is attached to, a device without a user priority counts as -1.
 * That puts it ahead of every other automatic device for memory of that
 * node, while any device the administrator ranked still comes first
 * (0 > -1).  A device with a user priority has that priority on every
 * list.  Example:
 *
 *	given:		A (node 1)   B (node 0)   C prio=5 (node 0)
 *	own priority:	A -2         B -3         C 5
 *	node 0's list:	C(5)  B(-1)  A(-2)
 *	node 1's list:	C(5)  A(-1)  B(-3)
 *
 * To swap out memory of node N, the allocator walks node N's list from
 * the head.  Before it tries a device it moves that device behind the
 * others of the same priority on that list, so that devices of equal
 * priority take turns (round robin) while a lower priority is touched
 * only when every device above it has failed.  A device that fills up
 * leaves every list at once; when space is freed on it, it is put back on
 * every list, behind the devices of its priority already there.
 *
 * Here a list is a small array of device numbers per node (at most 15
 * devices: a swap entry has 4 bits for the device, and 0 means "none"),
 * head first, sorted by priority on that list, non-increasing.  "Behind
 * its equals" is the position after the last device of the same priority.
 * struct swap_avail holds the arrays; its mutex (a leaf lock) protects the
 * lists and the full flags; priorities and nodes never change after
 * creation and are read without it.  A device whose node is unknown (-1)
 * is promoted nowhere.
 *
 * The caller's loop, as the kernel's: dev = swap_avail_next(sa, node);
 * allocate from dev; if dev has no slot at all, swap_avail_full(sa, dev)
 * and ask again, until -ENOSPC (every device full: keep the folio).  When
 * a slot is freed on a device that was full, swap_avail_room(sa, dev).  A
 * device that only lacks a contiguous run for a large folio is not full:
 * the folio is split instead (swapfile.c's -ENOSPC for an order > 0).
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lockdep.h"
#include "prim.h"
#include "swapdev.h"

struct swap_avail_list {
	uint8_t nr;
	uint8_t dev[SWAP_MAX_DEVICES];		/* head first */
};

struct swap_avail {
	/* Protects full[] and lists[]; a leaf lock. */
	pthread_mutex_t lock;
	unsigned nr_nodes, nr_devs;
	size_t alloc_len;
	int prio[SWAP_MAX_DEVICES];		/* own priority; fixed */
	int node[SWAP_MAX_DEVICES];		/* attached node or -1; fixed */
	bool full[SWAP_MAX_DEVICES];		/* off the lists */
	struct swap_avail_list lists[];		/* one per node */
};

static void avail_assert_locked(struct swap_avail *sa)
{
	assert(pthread_mutex_trylock(&sa->lock) == EBUSY);
	lock_assert_held(&sa->lock);
	(void)sa;
}

static int prio_on(const struct swap_avail *sa, unsigned node, unsigned dev)
{
	if (sa->prio[dev] < 0 && sa->node[dev] == (int)node)
		return -1;
	return sa->prio[dev];
}

/* Put dev on node's list behind every device of its priority or higher. */
static void list_add_locked(struct swap_avail *sa, unsigned node,
			    unsigned dev)
{
	struct swap_avail_list *l = &sa->lists[node];
	int p = prio_on(sa, node, dev);
	unsigned i = 0;

	avail_assert_locked(sa);
	assert(l->nr < SWAP_MAX_DEVICES);
	while (i < l->nr && prio_on(sa, node, l->dev[i]) >= p)
		i++;
	memmove(&l->dev[i + 1], &l->dev[i], l->nr - i);
	l->dev[i] = (uint8_t)dev;
	l->nr++;
}

static void list_del_locked(struct swap_avail *sa, unsigned node,
			    unsigned dev)
{
	struct swap_avail_list *l = &sa->lists[node];
	unsigned i = 0;

	avail_assert_locked(sa);
	while (i < l->nr && l->dev[i] != dev)
		i++;
	assert(i < l->nr);
	memmove(&l->dev[i], &l->dev[i + 1], l->nr - i - 1);
	l->nr--;
}

/* Move the head of node's list behind the others of its priority. */
static void list_rotate_head_locked(struct swap_avail *sa, unsigned node)
{
	struct swap_avail_list *l = &sa->lists[node];
	uint8_t head = l->dev[0];
	int p = prio_on(sa, node, head);
	unsigned i = 1;

	avail_assert_locked(sa);
	while (i < l->nr && prio_on(sa, node, l->dev[i]) == p)
		i++;
	memmove(&l->dev[0], &l->dev[1], i - 1);
	l->dev[i - 1] = head;
}

int swap_avail_create(struct swap_avail **out, unsigned nr_nodes,
		      const int *user_prio, const int *dev_node,
		      unsigned nr_devs)
{
	size_t len = sizeof(struct swap_avail) +
		     (size_t)nr_nodes * sizeof(struct swap_avail_list);
	struct swap_avail *sa;
	int least = -1;
	unsigned d, node;

	if (!out || !nr_nodes || nr_nodes > SWAP_MAX_NODES || !nr_devs ||
	    nr_devs > SWAP_MAX_DEVICES)
		return -EINVAL;
	for (d = 0; d < nr_devs; d++) {
		if (user_prio && user_prio[d] != SWAP_PRIO_AUTO &&
		    (user_prio[d] < 0 || user_prio[d] > SWAP_PRIO_MAX))
			return -EINVAL;
		if (dev_node && (dev_node[d] < -1 ||
				 dev_node[d] >= (int)SWAP_MAX_NODES))
			return -EINVAL;
	}
	sa = prim_alloc(len);
	if (!sa)
		return -ENOMEM;
	sa->alloc_len = len;
	sa->nr_nodes = nr_nodes;
	sa->nr_devs = nr_devs;
	pthread_mutex_init(&sa->lock, NULL);
	for (d = 0; d < nr_devs; d++) {
		bool user = user_prio && user_prio[d] != SWAP_PRIO_AUTO;

		sa->prio[d] = user ? user_prio[d] : --least;
		sa->node[d] = dev_node ? dev_node[d] : -1;
	}
	pthread_mutex_lock(&sa->lock);
	for (node = 0; node < nr_nodes; node++) {
		for (d = 0; d < nr_devs; d++)
			list_add_locked(sa, node, d);
	}
	pthread_mutex_unlock(&sa->lock);
	*out = sa;
	return 0;
}

void swap_avail_destroy(struct swap_avail *sa)
{
	if (!sa)
		return;
	pthread_mutex_destroy(&sa->lock);
	prim_free(sa, sa->alloc_len);
}

int swap_avail_prio(const struct swap_avail *sa, unsigned dev)
{
	assert(dev < sa->nr_devs);
	return sa->prio[dev];
}

int swap_avail_prio_on(const struct swap_avail *sa, unsigned node,
		       unsigned dev)
{
	assert(dev < sa->nr_devs);
	return prio_on(sa, node, dev);
}

int swap_avail_next(struct swap_avail *sa, int node)
{
	struct swap_avail_list *l;
	int dev = -ENOSPC;

	if (node < 0 || (unsigned)node >= sa->nr_nodes)
		node = 0;
	l = &sa->lists[node];
	pthread_mutex_lock(&sa->lock);
	if (l->nr) {
		dev = l->dev[0];
		list_rotate_head_locked(sa, (unsigned)node);
	}
	pthread_mutex_unlock(&sa->lock);
	return dev;
}

void swap_avail_full(struct swap_avail *sa, unsigned dev)
{
	unsigned node;

	assert(dev < sa->nr_devs);
	pthread_mutex_lock(&sa->lock);
	if (!sa->full[dev]) {
		sa->full[dev] = true;
		for (node = 0; node < sa->nr_nodes; node++)
			list_del_locked(sa, node, dev);
	}
	pthread_mutex_unlock(&sa->lock);
}

void swap_avail_room(struct swap_avail *sa, unsigned dev)
{
	unsigned node;

	assert(dev < sa->nr_devs);
	pthread_mutex_lock(&sa->lock);
	if (sa->full[dev]) {
		sa->full[dev] = false;
		for (node = 0; node < sa->nr_nodes; node++)
			list_add_locked(sa, node, dev);
	}
	pthread_mutex_unlock(&sa->lock);
}

bool swap_avail_has_room(const struct swap_avail *sa, unsigned dev)
{
	struct swap_avail *s = (struct swap_avail *)sa;
	bool room;

	assert(dev < sa->nr_devs);
	pthread_mutex_lock(&s->lock);
	room = !sa->full[dev];
	pthread_mutex_unlock(&s->lock);
	return room;
}

static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL,
		      *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

size_t swap_avail_describe(const struct swap_avail *sa, char *buf, size_t len)
{
	struct swap_avail *s = (struct swap_avail *)sa;
	size_t pos = 0;
	unsigned node, i;

	if (len)
		buf[0] = 0;
	pthread_mutex_lock(&s->lock);
	for (node = 0; node < sa->nr_nodes; node++) {
		const struct swap_avail_list *l = &sa->lists[node];

		append(buf, len, &pos, "node %u:", node);
		for (i = 0; i < l->nr; i++)
			append(buf, len, &pos, " %u(%d)", l->dev[i],
			       prio_on(sa, node, l->dev[i]));
		append(buf, len, &pos, "\n");
	}
	pthread_mutex_unlock(&s->lock);
	return pos;
}

static int avail_validate_list(const struct swap_avail *sa, unsigned node)
{
	const struct swap_avail_list *l = &sa->lists[node];
	unsigned seen = 0, want = 0, i, d;

	for (d = 0; d < sa->nr_devs; d++)
		want |= sa->full[d] ? 0 : 1u << d;
	if (l->nr > sa->nr_devs)
		return -EUCLEAN;
	for (i = 0; i < l->nr; i++) {
		d = l->dev[i];
		if (d >= sa->nr_devs || (seen & (1u << d)))
			return -EUCLEAN;
		seen |= 1u << d;
		if (i && prio_on(sa, node, l->dev[i - 1]) < prio_on(sa, node, d))
			return -EUCLEAN;
	}
	return seen == want ? 0 : -EUCLEAN;
}

int swap_avail_validate(const struct swap_avail *sa)
{
	struct swap_avail *s = (struct swap_avail *)sa;
	int least = -1, ret = 0;
	unsigned node, d;

	for (d = 0; d < sa->nr_devs; d++) {
		if (sa->prio[d] < 0 && sa->prio[d] != --least)
			return -EUCLEAN;
		if (sa->prio[d] > SWAP_PRIO_MAX)
			return -EUCLEAN;
	}
	pthread_mutex_lock(&s->lock);
	for (node = 0; node < sa->nr_nodes && !ret; node++)
		ret = avail_validate_list(sa, node);
	pthread_mutex_unlock(&s->lock);
	return ret;
}
