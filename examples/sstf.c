/* SPDX-License-Identifier: MIT */
/*
 * sstf: shortest seek time first, with a deadline.
 *
 * An example scheduler module for fuse-iosched, built out of tree against
 * the installed header only (see Makefile and README here, and
 * fuse-iosched-scheduler(3)).  It is small but complete: its own data,
 * a tunable, a computed read-only value, the host's merges, and a
 * wake-up-free policy.
 *
 * The policy: serve the queued request whose sector is closest to where
 * the last one ended, in either direction; that minimises each seek but
 * can starve a request far from a busy region, so a request that has
 * waited expire_ms is served first whatever the distance.  Reads and
 * writes are treated alike.  No idling: dispatch never holds a request
 * back, so force needs no special case.
 */
#include <fuse-iosched/elevator.h>

/* Default longest wait before distance stops counting. */
#define SSTF_EXPIRE_MS 500

struct sstf_data {
	/* Tunable first: the host sets it before init_queue. */
	int64_t expire_ms;

	struct elv_rb_root sort; /* queued requests by sector (elv_rb) */
	struct elv_list fifo;	/* queued requests by arrival (elv_fifo) */
	uint64_t head;		/* end sector of the last dispatch */
	int64_t nr_queued;	/* shown read-only as "queued" */
};

static struct sstf_data *sstf_data(struct elevator_queue *eq)
{
	return (struct sstf_data *)eq->elevator_data;
}

static int sstf_init_queue(struct elevator_queue *eq)
{
	struct sstf_data *sd = sstf_data(eq);

	/* The data arrives zeroed: sort is an empty tree. */
	elv_list_init(&sd->fifo);
	return 0;
}

static void sstf_add_request(struct elevator_queue *eq,
			     struct elv_request *rq, uint64_t now_ns)
{
	struct sstf_data *sd = sstf_data(eq);

	rq->elv_deadline_ns = now_ns + elv_ms_to_ns(sd->expire_ms);
	elv_rq_sort_add(&sd->sort, rq);
	elv_list_add_tail(&rq->elv_fifo, &sd->fifo);
	sd->nr_queued++;
}

static void sstf_remove(struct sstf_data *sd, struct elv_request *rq)
{
	elv_rq_sort_del(&sd->sort, rq);
	elv_list_del(&rq->elv_fifo);
	sd->nr_queued--;
}

/* A front merge moved rq's first sector down: keep the sort order. */
static void sstf_merged(struct elevator_queue *eq, struct elv_request *rq,
			enum elv_merge type)
{
	struct sstf_data *sd = sstf_data(eq);

	(void)type;
	if (elv_rq_sort_misplaced(rq)) {
		elv_rq_sort_del(&sd->sort, rq);
		elv_rq_sort_add(&sd->sort, rq);
	}
}

/*
 * The host merged next into rq, both queued: forget next, and let rq keep
 * the earlier deadline so merged data is not served later than its
 * oldest part.
 */
static void sstf_merged_requests(struct elevator_queue *eq,
				 struct elv_request *rq,
				 struct elv_request *next)
{
	struct sstf_data *sd = sstf_data(eq);

	elv_rq_merge_fifo(rq, next);
	sstf_remove(sd, next);
}

static uint64_t sstf_distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The queued request closest to the head: a neighbour of its position. */
static struct elv_request *sstf_closest(struct sstf_data *sd)
{
	struct elv_rb_node *n = sd->sort.node;
	struct elv_request *after = NULL, *before, *rq;

	/* The first request at or past the head, found by descending... */
	while (n != NULL) {
		rq = elv_rq_rb_entry(n);
		if (rq->sector >= sd->head) {
			after = rq;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	/* ...and the one just behind it. */
	before = after != NULL ? elv_rq_sort_prev(after) :
		elv_rq_rb_entry_or_null(elv_rb_last(&sd->sort));
	if (after == NULL || before == NULL)
		return after != NULL ? after : before;
	return sstf_distance(before->sector, sd->head) <
	       sstf_distance(after->sector, sd->head) ? before : after;
}

static struct elv_request *sstf_dispatch(struct elevator_queue *eq,
					 uint64_t now_ns, bool force)
{
	struct sstf_data *sd = sstf_data(eq);
	struct elv_request *rq;

	(void)force;	/* never idles: nothing to stop doing */
	if (elv_list_empty(&sd->fifo))
		return NULL;
	rq = elv_list_first(&sd->fifo, struct elv_request, elv_fifo);
	if (now_ns < rq->elv_deadline_ns)
		rq = sstf_closest(sd);
	sstf_remove(sd, rq);
	sd->head = elv_rq_end_sector(rq);
	return rq;
}

static bool sstf_has_work(struct elevator_queue *eq)
{
	return !elv_list_empty(&sstf_data(eq)->fifo);
}

/* Computed on each read of .control/iosched/queued. */
static int64_t sstf_show_queued(struct elevator_queue *eq)
{
	return sstf_data(eq)->nr_queued;
}

static const struct elv_tunable sstf_tunables[] = {
	ELV_TUNABLE(struct sstf_data, expire_ms, SSTF_EXPIRE_MS, 0, 60000,
		    "ms", "longest wait before distance stops counting"),
	ELV_TUNABLE_COMPUTED("queued", sstf_show_queued, "requests",
			     "requests waiting in the scheduler"),
	{ .name = NULL },
};

static struct elevator_type sstf_type = {
	.name = "sstf",
	.description = "shortest seek first, with a deadline",
	.data_size = sizeof(struct sstf_data),
	.init_queue = sstf_init_queue,
	.merged = sstf_merged,
	.merged_requests = sstf_merged_requests,
	.add_request = sstf_add_request,
	.dispatch = sstf_dispatch,
	.has_work = sstf_has_work,
	.tunables = sstf_tunables,
};

IOSCHED_ELEVATOR(sstf_type);
