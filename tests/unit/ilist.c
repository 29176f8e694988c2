// SPDX-License-Identifier: MIT
/*
 * ilist.c - the index-linked lists (src/ilist.h) against a simple model:
 * each list an array of element indices in order.  Random sequences of
 * every operation, on several lists sharing one element array, with the
 * links stored plainly and implicitly; after each step both walks, the
 * ends and the lengths match the model and nothing beside the links of
 * an element was written.
 */
#include <stdint.h>
#include <string.h>

#include "ilist.h"
#include "unitlib.h"

#define NR_ELEMS	64u
#define NR_LISTS	3u
#define STEPS		(T_SANITIZED ? 4000u : 20000u)
#define CANARY		0x5a5a5a5a5a5a5a5aull

/* The links in the middle of the element, with bytes on both sides. */
struct elem {
	uint64_t before;
	struct ilist_link link;
	uint16_t after;
};

static uint64_t rng;

static struct elem elems[NR_ELEMS];
static struct ilist lists[NR_LISTS];

/* The model: lists as arrays, and the list each element is on (-1). */
static uint32_t model[NR_LISTS][NR_ELEMS];
static uint32_t model_nr[NR_LISTS];
static int on[NR_ELEMS];

static struct ilist_array arr(bool implicit)
{
	if (implicit)
		return ILIST_ARRAY_IMPLICIT(elems, NR_ELEMS, link);
	return ILIST_ARRAY(elems, NR_ELEMS, link);
}

static void setup_elems(void)
{
	uint32_t i;

	memset(elems, 0, sizeof(elems));
	for (i = 0; i < NR_ELEMS; i++) {
		elems[i].before = CANARY;
		elems[i].after = 0xa5a5;
		on[i] = -1;
	}
	for (i = 0; i < NR_LISTS; i++) {
		ilist_init(&lists[i]);
		model_nr[i] = 0;
	}
}

static void model_insert(unsigned l, uint32_t pos, uint32_t i)
{
	assert(pos <= model_nr[l]);
	memmove(&model[l][pos + 1], &model[l][pos],
		(model_nr[l] - pos) * sizeof(model[l][0]));
	model[l][pos] = i;
	model_nr[l]++;
	on[i] = (int)l;
}

static uint32_t model_pos(unsigned l, uint32_t i)
{
	uint32_t p;

	for (p = 0; p < model_nr[l]; p++)
		if (model[l][p] == i)
			return p;
	t_fail("element %u is not on model list %u", i, l);
}

static void model_remove(unsigned l, uint32_t i)
{
	uint32_t pos = model_pos(l, i);

	memmove(&model[l][pos], &model[l][pos + 1],
		(model_nr[l] - pos - 1) * sizeof(model[l][0]));
	model_nr[l]--;
	on[i] = -1;
}

/* Every list as the model has it, walked both ways; no stray write. */
static void check(struct ilist_array a, unsigned step, const char *op)
{
	unsigned l, n;
	uint32_t i;

	for (i = 0; i < NR_ELEMS; i++)
		if (elems[i].before != CANARY || elems[i].after != 0xa5a5)
			t_fail("step %u (%s): element %u's other fields written",
			       step, op, i);
	for (l = 0; l < NR_LISTS; l++) {
		const struct ilist *h = &lists[l];
		const uint32_t nr = model_nr[l];

		if (h->nr != nr || ilist_empty(h) != (nr == 0))
			t_fail("step %u (%s): list %u has nr %u, model %u",
			       step, op, l, h->nr, nr);
		if (ilist_first(h) != (nr ? model[l][0] : ILIST_NIL) ||
		    ilist_last(h) != (nr ? model[l][nr - 1] : ILIST_NIL))
			t_fail("step %u (%s): list %u ends %u..%u, model %u..%u",
			       step, op, l, ilist_first(h), ilist_last(h),
			       nr ? model[l][0] : ILIST_NIL,
			       nr ? model[l][nr - 1] : ILIST_NIL);
		n = 0;
		ilist_for_each(i, h, a) {
			if (n >= nr || i != model[l][n])
				t_fail("step %u (%s): list %u: element %u at %u, "
				       "model %u", step, op, l, i, n,
				       n < nr ? model[l][n] : ILIST_NIL);
			n++;
		}
		if (n != nr)
			t_fail("step %u (%s): list %u: %u walked forward, model %u",
			       step, op, l, n, nr);
		for (i = ilist_last(h); i != ILIST_NIL; i = ilist_prev(a, i)) {
			if (n == 0 || i != model[l][n - 1])
				t_fail("step %u (%s): list %u: element %u backward "
				       "at %u", step, op, l, i, n);
			n--;
		}
		if (n != 0)
			t_fail("step %u (%s): list %u: %u short walking back",
			       step, op, l, n);
		if (!ilist_is_valid(h, a))
			t_fail("step %u (%s): list %u not valid", step, op, l);
	}
}

/* An element on no list (NR_ELEMS if all are on one), or on one. */
static uint32_t pick(bool listed)
{
	uint32_t k, i = (uint32_t)(t_rand(&rng) % NR_ELEMS);

	for (k = 0; k < NR_ELEMS; k++, i = (i + 1) % NR_ELEMS)
		if ((on[i] >= 0) == listed)
			return i;
	return NR_ELEMS;
}

/* One random operation on the lists and the model alike. */
static const char *step_random(struct ilist_array a)
{
	unsigned l = (unsigned)(t_rand(&rng) % NR_LISTS), to;
	uint32_t i, pos;

	switch (t_rand(&rng) % 8) {
	case 0:
		if ((i = pick(false)) == NR_ELEMS)
			return "none";
		ilist_add_head(&lists[l], a, i);
		model_insert(l, 0, i);
		return "add_head";
	case 1:
		if ((i = pick(false)) == NR_ELEMS)
			return "none";
		ilist_add_tail(&lists[l], a, i);
		model_insert(l, model_nr[l], i);
		return "add_tail";
	case 2:
		/* After a random element of l, or first (ILIST_NIL). */
		if ((i = pick(false)) == NR_ELEMS)
			return "none";
		pos = (uint32_t)(t_rand(&rng) % (model_nr[l] + 1));
		ilist_add_after(&lists[l], a,
				pos ? model[l][pos - 1] : ILIST_NIL, i);
		model_insert(l, pos, i);
		return "add_after";
	case 3:
	case 4:
		if ((i = pick(true)) == NR_ELEMS)
			return "none";
		l = (unsigned)on[i];
		ilist_del(&lists[l], a, i);
		model_remove(l, i);
		return "del";
	case 5:
		if ((i = pick(true)) == NR_ELEMS)
			return "none";
		l = (unsigned)on[i];
		to = (unsigned)(t_rand(&rng) % NR_LISTS);
		if (t_rand(&rng) & 1) {
			ilist_move_head(&lists[l], &lists[to], a, i);
			model_remove(l, i);
			model_insert(to, 0, i);
			return "move_head";
		}
		ilist_move_tail(&lists[l], &lists[to], a, i);
		model_remove(l, i);
		model_insert(to, model_nr[to], i);
		return "move_tail";
	case 6:
		i = ilist_pop_head(&lists[l], a);
		if (i != (model_nr[l] ? model[l][0] : ILIST_NIL))
			t_fail("pop_head of list %u gave %u", l, i);
		if (i != ILIST_NIL)
			model_remove(l, i);
		return "pop_head";
	default:
		i = ilist_pop_tail(&lists[l], a);
		if (i != (model_nr[l] ? model[l][model_nr[l] - 1] : ILIST_NIL))
			t_fail("pop_tail of list %u gave %u", l, i);
		if (i != ILIST_NIL)
			model_remove(l, i);
		return "pop_tail";
	}
}

static void run_random(bool implicit)
{
	struct ilist_array a = arr(implicit);
	unsigned s;
	uint32_t i;

	setup_elems();
	if (implicit) {
		/* The zeroed array is the list of all: on list 0. */
		ilist_init_all(&lists[0], a);
		for (i = 0; i < NR_ELEMS; i++)
			model_insert(0, i, i);
	}
	check(a, 0, "init");
	for (s = 1; s <= STEPS; s++)
		check(a, s, step_random(a));
}

/* The operations on a few elements, by hand: order, ends, counts. */
static void test_basic(void)
{
	struct ilist_array a = arr(false);
	struct ilist *l = &lists[0];

	setup_elems();
	if (!ilist_empty(l) || ilist_pop_head(l, a) != ILIST_NIL ||
	    ilist_pop_tail(l, a) != ILIST_NIL)
		t_fail("a new list is not empty");
	ilist_add_head(l, a, 5);		/* 5 */
	ilist_add_head(l, a, 7);		/* 7 5 */
	ilist_add_tail(l, a, 2);		/* 7 5 2 */
	ilist_add_after(l, a, 7, 9);		/* 7 9 5 2 */
	ilist_add_after(l, a, ILIST_NIL, 1);	/* 1 7 9 5 2 */
	ilist_add_after(l, a, 2, 3);		/* 1 7 9 5 2 3 */
	if (l->nr != 6 || ilist_first(l) != 1 || ilist_last(l) != 3 ||
	    ilist_next(a, 9) != 5 || ilist_prev(a, 9) != 7 ||
	    ilist_prev(a, 1) != ILIST_NIL || ilist_next(a, 3) != ILIST_NIL)
		t_fail("1 7 9 5 2 3 not built as such");
	ilist_del(l, a, 9);			/* 1 7 5 2 3 */
	ilist_del(l, a, 1);			/* 7 5 2 3 */
	ilist_del(l, a, 3);			/* 7 5 2 */
	if (l->nr != 3 || ilist_first(l) != 7 || ilist_last(l) != 2 ||
	    ilist_next(a, 7) != 5 || ilist_prev(a, 2) != 5)
		t_fail("deletions from the middle and both ends");
	ilist_move_tail(l, &lists[1], a, 7);	/* 5 2 | 7 */
	ilist_move_head(l, &lists[1], a, 2);	/* 5 | 2 7 */
	if (l->nr != 1 || lists[1].nr != 2 || ilist_first(&lists[1]) != 2 ||
	    ilist_last(&lists[1]) != 7 || ilist_first(l) != 5)
		t_fail("moves between lists");
	if (ilist_pop_tail(&lists[1], a) != 7 ||
	    ilist_pop_head(&lists[1], a) != 2 || !ilist_empty(&lists[1]) ||
	    ilist_pop_head(l, a) != 5 || !ilist_empty(l) ||
	    ilist_first(l) != ILIST_NIL || ilist_last(l) != ILIST_NIL)
		t_fail("pops down to empty lists");
}

/* Random operations on plain links against the model. */
static void test_random(void)
{
	run_random(false);
}

/* Random operations on implicit links against the model. */
static void test_random_implicit(void)
{
	run_random(true);
}

/*
 * A zeroed array with implicit links is the list 0 .. nr-1, and taking
 * element k off it writes the links of k - 1 and k + 1 only.
 */
static void test_implicit_untouched(void)
{
	static struct elem zero;
	struct ilist_array a = arr(true);
	const uint32_t k = NR_ELEMS / 2;
	uint32_t i, n = 0;

	setup_elems();
	ilist_init_all(&lists[0], a);
	ilist_for_each(i, &lists[0], a)
		if (i != n++)
			t_fail("element %u at %u of a zeroed array", i, n - 1);
	if (n != NR_ELEMS || !ilist_is_valid(&lists[0], a))
		t_fail("%u elements on the list of a zeroed array", n);
	ilist_del(&lists[0], a, k);
	zero.before = CANARY;
	zero.after = 0xa5a5;
	for (i = 0; i < NR_ELEMS; i++)
		if (i != k - 1 && i != k + 1 &&
		    memcmp(&elems[i], &zero, sizeof(zero)))
			t_fail("element %u written when %u was taken off", i, k);
	if (ilist_next(a, k - 1) != k + 1 || ilist_prev(a, k + 1) != k - 1 ||
	    lists[0].nr != NR_ELEMS - 1 || !ilist_is_valid(&lists[0], a))
		t_fail("%u not taken off the implicit list", k);
	/* The ends: 0 and nr-1 have no neighbour past them. */
	if (ilist_pop_head(&lists[0], a) != 0 ||
	    ilist_pop_tail(&lists[0], a) != NR_ELEMS - 1 ||
	    ilist_first(&lists[0]) != 1 || ilist_prev(a, 1) != ILIST_NIL ||
	    ilist_last(&lists[0]) != NR_ELEMS - 2 ||
	    ilist_next(a, NR_ELEMS - 2) != ILIST_NIL)
		t_fail("the ends of an implicit list");
}

/* ilist_is_valid() finds a bad prev, a cycle, a wrong count or end. */
static void test_is_valid(void)
{
	struct ilist_array a = arr(false);
	struct ilist *l = &lists[0];
	uint32_t i;

	setup_elems();
	for (i = 0; i < 4; i++)
		ilist_add_tail(l, a, i);	/* 0 1 2 3 */
	if (!ilist_is_valid(l, a))
		t_fail("a good list found bad");
	elems[2].link.prev = 0;
	if (ilist_is_valid(l, a))
		t_fail("a wrong prev not found");
	elems[2].link.prev = 1;
	elems[3].link.next = 1;
	if (ilist_is_valid(l, a))
		t_fail("a cycle not found");
	elems[3].link.next = ILIST_NIL;
	elems[1].link.next = NR_ELEMS + 3;
	if (ilist_is_valid(l, a))
		t_fail("a link out of the array not found");
	elems[1].link.next = 2;
	l->nr = 5;
	if (ilist_is_valid(l, a))
		t_fail("a wrong count not found");
	l->nr = 4;
	l->last = 2;
	if (ilist_is_valid(l, a))
		t_fail("a wrong last not found");
	l->last = 3;
	if (!ilist_is_valid(l, a))
		t_fail("the repaired list found bad");
}

static const struct t_case cases[] = {
	T_CASE(basic, "each operation on a few elements: order, ends, counts"),
	T_CASE(random, "random operations on plain links match the model"),
	T_CASE(random_implicit,
	       "random operations on implicit links match the model"),
	T_CASE(implicit_untouched,
	       "a zeroed implicit array is one list; a delete writes 2 elements"),
	T_CASE(is_valid, "ilist_is_valid() finds bad links, cycles, counts"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .seed = 0x1157, .rng = &rng,
	});
}
