/* SPDX-License-Identifier: MIT */
/*
 * A red-black tree for schedulers' sorted sets (since 3.0), included by
 * <fuse-iosched/elevator.h>: O(log n) insert, erase and neighbour steps
 * where a sorted list costs O(n), as the kernel's elevators sort their
 * requests.  The node is intrusive (struct elv_request has one, elv_rb);
 * the caller descends to the leaf where a node belongs, links it there
 * with elv_rb_link_node() and rebalances with elv_rb_insert_color().
 *
 * The code is inline, compiled into each module, and not a host service:
 * a tree is the scheduler's private data, never read by the host, so
 * keeping all the code that knows its invariants (the colour bit, the
 * rebalancing, the walk) in one binary means a module never depends on
 * a host's algorithm agreeing with its own traversal.  A fix reaches a
 * module when it is rebuilt, like any fix of its own code.
 *
 * Colour in bit 0 of parent_color (1: black); the parent is at least
 * 4-byte aligned.  A NULL child is a black leaf.
 */
#ifndef FUSE_IOSCHED_RBTREE_H
#define FUSE_IOSCHED_RBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct elv_rb_node {
	uintptr_t parent_color;
	struct elv_rb_node *left, *right;
};

struct elv_rb_root {
	struct elv_rb_node *node;
};

#define ELV_RB_ROOT { NULL }
#define ELV_RB_BLACK ((uintptr_t)1)

static inline struct elv_rb_node *elv_rb_parent(const struct elv_rb_node *n)
{
	return (struct elv_rb_node *)(n->parent_color & ~(uintptr_t)3);
}

static inline bool elv_rb_is_black(const struct elv_rb_node *n)
{
	return n == NULL || (n->parent_color & ELV_RB_BLACK) != 0;
}

static inline void elv_rb_set_black(struct elv_rb_node *n)
{
	n->parent_color |= ELV_RB_BLACK;
}

static inline void elv_rb_set_red(struct elv_rb_node *n)
{
	n->parent_color &= ~ELV_RB_BLACK;
}

static inline void elv_rb_set_parent(struct elv_rb_node *n,
				     struct elv_rb_node *parent)
{
	n->parent_color = (uintptr_t)parent | (n->parent_color & 3);
}

static inline bool elv_rb_empty(const struct elv_rb_root *root)
{
	return root->node == NULL;
}

/* Put node, a new red leaf, at *link under parent; then insert_color. */
static inline void elv_rb_link_node(struct elv_rb_node *node,
				    struct elv_rb_node *parent,
				    struct elv_rb_node **link)
{
	node->parent_color = (uintptr_t)parent;
	node->left = node->right = NULL;
	*link = node;
}

/* Make new take old's place as parent's child (or as the root). */
static inline void elv_rb_replace_child(struct elv_rb_root *root,
					struct elv_rb_node *parent,
					struct elv_rb_node *old,
					struct elv_rb_node *new_)
{
	if (parent == NULL)
		root->node = new_;
	else if (parent->left == old)
		parent->left = new_;
	else
		parent->right = new_;
}

/* x's right child takes its place; x becomes its left child. */
static inline void elv_rb_rotate_left(struct elv_rb_root *root,
				      struct elv_rb_node *x)
{
	struct elv_rb_node *y = x->right, *parent = elv_rb_parent(x);

	x->right = y->left;
	if (y->left != NULL)
		elv_rb_set_parent(y->left, x);
	y->left = x;
	elv_rb_set_parent(y, parent);
	elv_rb_replace_child(root, parent, x, y);
	elv_rb_set_parent(x, y);
}

/* x's left child takes its place; x becomes its right child. */
static inline void elv_rb_rotate_right(struct elv_rb_root *root,
				       struct elv_rb_node *x)
{
	struct elv_rb_node *y = x->left, *parent = elv_rb_parent(x);

	x->left = y->right;
	if (y->right != NULL)
		elv_rb_set_parent(y->right, x);
	y->right = x;
	elv_rb_set_parent(y, parent);
	elv_rb_replace_child(root, parent, x, y);
	elv_rb_set_parent(x, y);
}

/* Rebalance after elv_rb_link_node(): no red node with a red child. */
static inline void elv_rb_insert_color(struct elv_rb_root *root,
				       struct elv_rb_node *node)
{
	struct elv_rb_node *parent, *gparent, *uncle;

	while ((parent = elv_rb_parent(node)) != NULL &&
	       !elv_rb_is_black(parent)) {
		/* A red parent is not the root: gparent exists. */
		gparent = elv_rb_parent(parent);
		uncle = parent == gparent->left ? gparent->right :
			gparent->left;
		if (!elv_rb_is_black(uncle)) {
			/* Push the red up two levels and go on from there. */
			elv_rb_set_black(uncle);
			elv_rb_set_black(parent);
			elv_rb_set_red(gparent);
			node = gparent;
			continue;
		}
		if (parent == gparent->left) {
			if (node == parent->right) {
				elv_rb_rotate_left(root, parent);
				parent = node;
			}
			elv_rb_rotate_right(root, gparent);
		} else {
			if (node == parent->left) {
				elv_rb_rotate_right(root, parent);
				parent = node;
			}
			elv_rb_rotate_left(root, gparent);
		}
		elv_rb_set_black(parent);
		elv_rb_set_red(gparent);
		break;
	}
	elv_rb_set_black(root->node);
}

/*
 * After an erase, the subtree at x (NULL: a leaf) under parent is one
 * black short: borrow from x's sibling or push the shortage up.
 */
static inline void elv_rb_erase_color(struct elv_rb_root *root,
				      struct elv_rb_node *x,
				      struct elv_rb_node *parent)
{
	struct elv_rb_node *w;

	while (x != root->node && elv_rb_is_black(x)) {
		bool left = x == parent->left;

		w = left ? parent->right : parent->left;
		if (!elv_rb_is_black(w)) {
			elv_rb_set_black(w);
			elv_rb_set_red(parent);
			if (left)
				elv_rb_rotate_left(root, parent);
			else
				elv_rb_rotate_right(root, parent);
			w = left ? parent->right : parent->left;
		}
		if (elv_rb_is_black(w->left) && elv_rb_is_black(w->right)) {
			elv_rb_set_red(w);
			x = parent;
			parent = elv_rb_parent(x);
			continue;
		}
		if (left && elv_rb_is_black(w->right)) {
			elv_rb_set_black(w->left);
			elv_rb_set_red(w);
			elv_rb_rotate_right(root, w);
			w = parent->right;
		} else if (!left && elv_rb_is_black(w->left)) {
			elv_rb_set_black(w->right);
			elv_rb_set_red(w);
			elv_rb_rotate_left(root, w);
			w = parent->left;
		}
		/* w takes parent's colour; parent and w's far child black. */
		w->parent_color = (w->parent_color & ~ELV_RB_BLACK) |
				  (parent->parent_color & ELV_RB_BLACK);
		elv_rb_set_black(parent);
		if (left) {
			elv_rb_set_black(w->right);
			elv_rb_rotate_left(root, parent);
		} else {
			elv_rb_set_black(w->left);
			elv_rb_rotate_right(root, parent);
		}
		x = root->node;
		break;
	}
	if (x != NULL)
		elv_rb_set_black(x);
}

static inline void elv_rb_erase(struct elv_rb_root *root,
				struct elv_rb_node *node)
{
	struct elv_rb_node *child, *parent, *y;
	bool black;

	if (node->left == NULL || node->right == NULL) {
		child = node->left != NULL ? node->left : node->right;
		parent = elv_rb_parent(node);
		black = elv_rb_is_black(node);
		if (child != NULL)
			elv_rb_set_parent(child, parent);
		elv_rb_replace_child(root, parent, node, child);
	} else {
		/* Two children: node's successor y takes its place. */
		for (y = node->right; y->left != NULL; y = y->left)
			;
		child = y->right;
		black = elv_rb_is_black(y);
		parent = elv_rb_parent(y);
		if (parent == node) {
			parent = y;
		} else {
			if (child != NULL)
				elv_rb_set_parent(child, parent);
			parent->left = child;
			y->right = node->right;
			elv_rb_set_parent(node->right, y);
		}
		y->left = node->left;
		elv_rb_set_parent(node->left, y);
		y->parent_color = node->parent_color;
		elv_rb_replace_child(root, elv_rb_parent(node), node, y);
	}
	if (black)
		elv_rb_erase_color(root, child, parent);
}

static inline struct elv_rb_node *elv_rb_first(const struct elv_rb_root *root)
{
	struct elv_rb_node *n = root->node;

	while (n != NULL && n->left != NULL)
		n = n->left;
	return n;
}

static inline struct elv_rb_node *elv_rb_last(const struct elv_rb_root *root)
{
	struct elv_rb_node *n = root->node;

	while (n != NULL && n->right != NULL)
		n = n->right;
	return n;
}

/* The node after n in order, or NULL. */
static inline struct elv_rb_node *elv_rb_next(const struct elv_rb_node *n)
{
	struct elv_rb_node *p;

	if (n->right != NULL) {
		for (n = n->right; n->left != NULL; n = n->left)
			;
		return (struct elv_rb_node *)n;
	}
	while ((p = elv_rb_parent(n)) != NULL && n == p->right)
		n = p;
	return p;
}

/* The node before n in order, or NULL. */
static inline struct elv_rb_node *elv_rb_prev(const struct elv_rb_node *n)
{
	struct elv_rb_node *p;

	if (n->left != NULL) {
		for (n = n->left; n->right != NULL; n = n->right)
			;
		return (struct elv_rb_node *)n;
	}
	while ((p = elv_rb_parent(n)) != NULL && n == p->left)
		n = p;
	return p;
}

#ifdef __cplusplus
}
#endif

#endif /* FUSE_IOSCHED_RBTREE_H */
