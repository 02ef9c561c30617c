/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The header's rb-tree (rbtree.h) through the sector-order helpers of
 * elevator.h: random inserts, erases and re-sorts against a reference
 * kept by hand, checking after each step the red-black rules (no red
 * node with a red child, one black height, parents that match), sector
 * order with equal sectors in insertion order, and the neighbour steps;
 * then elv_rq_sort_misplaced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NR 600

static struct elv_request rqs[NR];
static bool in_tree[NR];
static unsigned seq[NR];	/* insertion order, for equal sectors */
static unsigned clock_seq;

/* Black height of n's subtree, or -1 when a rule is broken below. */
static int rb_check(const struct elv_rb_node *n,
		    const struct elv_rb_node *parent)
{
	int l, r;

	if (n == NULL)
		return 1;
	if (elv_rb_parent(n) != parent)
		return -1;
	if (!elv_rb_is_black(n) &&
	    (!elv_rb_is_black(n->left) || !elv_rb_is_black(n->right)))
		return -1;
	l = rb_check(n->left, n);
	r = rb_check(n->right, n);
	if (l < 0 || r < 0 || l != r)
		return -1;
	return l + (elv_rb_is_black(n) ? 1 : 0);
}

static unsigned idx(const struct elv_request *rq)
{
	return (unsigned)(rq - rqs);
}

/* The tree in order, forwards and backwards, against the reference. */
static void check_tree(struct elv_rb_root *root)
{
	struct elv_request *rq, *prev = NULL;
	unsigned n = 0, expect = 0, i;

	for (i = 0; i < NR; i++)
		expect += in_tree[i];
	CHECK(rb_check(root->node, NULL) > 0 || root->node == NULL);
	CHECK(elv_rb_is_black(root->node));
	for (rq = elv_rq_sort_first(root); rq != NULL;
	     rq = elv_rq_sort_next(rq)) {
		CHECK(in_tree[idx(rq)]);
		if (prev != NULL) {
			CHECK(prev->sector <= rq->sector);
			if (prev->sector == rq->sector)
				CHECK(seq[idx(prev)] < seq[idx(rq)]);
			CHECK(elv_rq_sort_prev(rq) == prev);
		}
		prev = rq;
		n++;
	}
	CHECK_EQ(n, expect);
	CHECK(elv_rq_rb_entry_or_null(elv_rb_last(root)) == prev);
}

static void add(struct elv_rb_root *root, unsigned i)
{
	seq[i] = clock_seq++;
	in_tree[i] = true;
	elv_rq_sort_add(root, &rqs[i]);
}

int main(void)
{
	struct elv_rb_root root = ELV_RB_ROOT;
	unsigned step, i;

	srandom(26);
	CHECK(elv_rq_sort_first(&root) == NULL);
	for (step = 0; step < 20000; step++) {
		i = (unsigned)random() % NR;
		if (!in_tree[i]) {
			/* Few distinct sectors: many ties. */
			rqs[i].sector = (uint64_t)(random() % 200) * 8;
			add(&root, i);
		} else if (random() % 4 != 0) {
			elv_rq_sort_del(&root, &rqs[i]);
			in_tree[i] = false;
		} else {
			/* A front merge moves it down: re-sort it. */
			if (rqs[i].sector >= 8)
				rqs[i].sector -= 8;
			elv_rq_sort_del(&root, &rqs[i]);
			add(&root, i);
		}
		if (step % 97 == 0 || step > 19900)
			check_tree(&root);
	}
	/* Empty it in order, as a dispatch would. */
	while (!elv_rb_empty(&root)) {
		struct elv_request *rq = elv_rq_sort_first(&root);

		elv_rq_sort_del(&root, rq);
		in_tree[idx(rq)] = false;
		check_tree(&root);
	}
	/* Misplaced only past a neighbour, not beside an equal one. */
	for (i = 0; i < 3; i++) {
		rqs[i].sector = 8 * (i + 1);
		add(&root, i);
	}
	CHECK(!elv_rq_sort_misplaced(&rqs[1]));
	rqs[1].sector = 8;
	CHECK(!elv_rq_sort_misplaced(&rqs[1]));
	rqs[1].sector = 7;
	CHECK(elv_rq_sort_misplaced(&rqs[1]));
	rqs[1].sector = 25;
	CHECK(elv_rq_sort_misplaced(&rqs[1]));
	return h_exit("test_rbtree");
}
