/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FUSE over io_uring (-o fuse_uring=N): the kernel hands each request to
 * a ring entry of ours, and takes its reply together with the fetch of
 * the entry's next request, in one io_uring command.  /dev/fuse still
 * carries what the kernel sends outside the ring (FORGET, INTERRUPT, the
 * requests before every queue is registered) and our notifications,
 * through loop.c as before.
 *
 * The kernel has a queue per CPU; each of ours is served by a thread
 * pinned to that CPU, with an io_uring of its own and N entries.  An
 * entry is a header page the kernel fills, a page of our own, and the
 * payload buffer, registered once.  The thread lays a request out as
 * libfuse expects it, the header and the operation's arguments in the
 * page of our own just before the payload (so a write's data stays on a
 * page boundary), and processes it with fuse_session_process_buf.
 *
 * The reply comes back through the session's io (killpriv.c's writev)
 * to fusering_reply, on whichever thread answers: the entry is found by
 * the request's id, the reply copied into it and its commit submitted
 * under the queue's lock.  The queue's own thread only queues its
 * commits, and submits them as it goes back to wait for requests.
 *
 * An entry is the request's until its reply, so a write's data is used
 * where it arrived (fusering_stable).  The thread performs what the
 * elevator dispatches at once only when no other request waits in its
 * ring (fusering_busy, dispatch.c); else workers do, as the requests
 * waiting would be held up for the whole backing I/O.
 */
#include "config.h"

#include <errno.h>
#include <linux/fuse.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "daemon.h"

#ifdef HAVE_LIBURING
#include <liburing.h>

/* The kernel's interface (linux/fuse.h 7.42), which older headers lack. */
struct fusering_header {
	char in_out[128];	/* fuse_in_header; our fuse_out_header */
	char op_in[128];	/* the operation's first argument */
	struct {
		uint64_t flags;
		uint64_t commit_id;	/* the request's, for its commit */
		uint32_t payload_sz;	/* bytes in the payload buffer */
		uint32_t padding;
		uint64_t reserved;
	} ent;
};
struct fusering_cmd {		/* the SQE's command area */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
enum { FUSERING_REGISTER = 1, FUSERING_COMMIT_AND_FETCH = 2 };

struct fusering_queue;

struct fusering_ent {
	struct fusering_queue *q;
	struct fusering_header *hdr;
	char *payload;
	struct iovec iov[2];	/* hdr and payload, for the kernel */
	uint64_t commit_id;	/* the request's; its thread's until replied */
	_Atomic uint64_t unique;	/* the request in our hands, or 0 */
};

struct fusering_queue {
	struct io_uring ring;	/* its submission side: lock */
	pthread_mutex_t lock;
	pthread_t thread;
	bool started;
	int efd;		/* written to end the thread */
	uint64_t efd_count;
	unsigned qid;
	uint64_t served;	/* requests; the thread's, read after it ends */
	unsigned seen;		/* completions taken from the ring, of those
				 * it holds; the thread's own */
	struct fusering_ent *ents;
};

static struct {
	struct fuse_session *se;
	int fd;			/* /dev/fuse */
	unsigned nr_queues, depth;
	size_t payload, block;	/* payload bytes; an entry's mapping */
	struct fusering_queue *queues;
	atomic_bool on;		/* entries registered: replies may be ours */
} fusering;

static __thread struct fusering_queue *fusering_self;
static __thread struct fusering_ent *fusering_current;

int fusering_probe(char *err, size_t size)
{
	(void)err;
	(void)size;
	return 0;
}

void fusering_configure(unsigned depth)
{
	fusering.depth = depth;
}

bool fusering_wanted(void)
{
	return fusering.depth > 0;
}

bool fusering_busy(void)
{
	const struct fusering_queue *q = fusering_self;

	return q != NULL && io_uring_cq_ready(&q->ring) > q->seen;
}

bool fusering_stable(const void *data)
{
	const struct fusering_ent *e = fusering_current;

	return e != NULL && (const char *)data >= e->payload &&
	       (const char *)data < e->payload + fusering.payload;
}

/* Under q's lock: queue e's command cmd on q's ring. */
static void do_fusering_prep(struct fusering_queue *q, struct fusering_ent *e,
			     unsigned cmd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	struct fusering_cmd *c;

	/* The ring has a slot for each entry and the eventfd's read. */
	if (sqe == NULL) {
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
		if (sqe == NULL) {
			log_ratelimited(LOG_ERR, "fuse_uring: queue %u: no "
					"room in the ring", q->qid);
			return;
		}
	}
	memset(sqe, 0, 2 * sizeof *sqe);	/* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fusering.fd;
	sqe->cmd_op = cmd;
	if (cmd == FUSERING_REGISTER) {
		sqe->addr = (uintptr_t)e->iov;
		sqe->len = 2;
	}
	c = (struct fusering_cmd *)sqe->cmd;
	c->qid = (uint16_t)q->qid;
	c->commit_id = cmd == FUSERING_COMMIT_AND_FETCH ? e->commit_id : 0;
	io_uring_sqe_set_data(sqe, e);
}

/* Commit e's reply and ask for its next request. */
static void fusering_commit(struct fusering_ent *e)
{
	struct fusering_queue *q = e->q;

	pthread_mutex_lock(&q->lock);
	do_fusering_prep(q, e, FUSERING_COMMIT_AND_FETCH);
	/*
	 * The entry is the ring thread's again, with all we wrote and read
	 * of it (its next request comes only once this is submitted).
	 */
	atomic_store_explicit(&e->unique, 0, memory_order_release);
	/* The queue's thread submits its own as it goes to wait. */
	if (fusering_self != q)
		io_uring_submit(&q->ring);
	pthread_mutex_unlock(&q->lock);
}

/* The entry serving request unique, or NULL: not a ring request. */
static struct fusering_ent *fusering_find(uint64_t unique)
{
	struct fusering_ent *e = fusering_current;
	unsigned i, j;

	if (e != NULL && atomic_load_explicit(&e->unique,
					      memory_order_relaxed) == unique)
		return e;
	for (i = 0; i < fusering.nr_queues; i++)
		for (j = 0; j < fusering.depth; j++) {
			e = &fusering.queues[i].ents[j];
			if (atomic_load_explicit(&e->unique,
						 memory_order_relaxed) == unique)
				return e;
		}
	return NULL;
}

/* Answer e's request with -error alone. */
static void fusering_fail(struct fusering_ent *e, uint64_t unique, int error)
{
	struct fuse_out_header *out = (struct fuse_out_header *)e->hdr->in_out;

	out->len = sizeof *out;
	out->error = -error;
	out->unique = unique;
	e->hdr->ent.payload_sz = 0;
	fusering_commit(e);
}

bool fusering_reply(const struct iovec *iov, int count)
{
	const struct fuse_out_header *reply = iov[0].iov_base;
	struct fuse_out_header *out;
	struct fusering_ent *e;
	size_t n = 0;
	int i;

	/* Notifications (unique 0) go to /dev/fuse, as do replies to
	 * what came from there. */
	if (!atomic_load_explicit(&fusering.on, memory_order_acquire) ||
	    reply->unique == 0 || (e = fusering_find(reply->unique)) == NULL)
		return false;
	for (i = 1; i < count; i++) {
		if (iov[i].iov_len > fusering.payload - n) {
			log_ratelimited(LOG_ERR, "fuse_uring: a reply of more "
					"than %zu bytes: EIO", fusering.payload);
			fusering_fail(e, reply->unique, EIO);
			return true;
		}
		memcpy(e->payload + n, iov[i].iov_base, iov[i].iov_len);
		n += iov[i].iov_len;
	}
	out = (struct fuse_out_header *)e->hdr->in_out;
	out->len = (uint32_t)(sizeof *out + n);
	out->error = reply->error;
	out->unique = reply->unique;
	e->hdr->ent.payload_sz = (uint32_t)n;
	fusering_commit(e);
	return true;
}

/* On q's thread: process e's new request, as read from /dev/fuse. */
static void fusering_serve(struct fusering_ent *e)
{
	const struct fuse_in_header *in =
		(const struct fuse_in_header *)e->hdr->in_out;
	uint32_t payload;
	struct fuse_buf buf;
	size_t args;
	char *start;

	/* After the last reply's writes, wherever it was made. */
	(void)atomic_load_explicit(&e->unique, memory_order_acquire);
	payload = e->hdr->ent.payload_sz;
	e->commit_id = e->hdr->ent.commit_id;
	/* The operation's argument is what the length leaves over. */
	if (payload > fusering.payload || in->len < sizeof *in + payload ||
	    (args = in->len - sizeof *in - payload) > sizeof e->hdr->op_in) {
		log_ratelimited(LOG_ERR, "fuse_uring: request %llu (opcode "
				"%u) of %u bytes, %u of payload: EIO",
				(unsigned long long)in->unique, in->opcode,
				in->len, payload);
		fusering_fail(e, in->unique, EIO);
		return;
	}
	start = e->payload - sizeof *in - args;
	memcpy(start, in, sizeof *in);
	memcpy(start + sizeof *in, e->hdr->op_in, args);
	atomic_store_explicit(&e->unique, in->unique, memory_order_relaxed);
	e->q->served++;
	killpriv_note(start, in->len);
	buf = (struct fuse_buf){ .mem = start, .size = in->len };
	fusering_current = e;
	fuse_session_process_buf(fusering.se, &buf);
	fusering_current = NULL;
}

/* On q's thread: one completion; false when the thread is to end. */
static bool fusering_cqe(struct fusering_queue *q,
			 const struct io_uring_cqe *cqe)
{
	struct fusering_ent *e = io_uring_cqe_get_data(cqe);

	if ((void *)e == &q->efd)
		return false;
	switch (cqe->res) {
	case 0:
		if (fuse_session_exited(fusering.se))
			return false;
		fusering_serve(e);
		return true;
	case -EINTR:
	case -EAGAIN:
		/* Not taken: ask again. */
		pthread_mutex_lock(&q->lock);
		do_fusering_prep(q, e, e->commit_id != 0 ?
				 FUSERING_COMMIT_AND_FETCH : FUSERING_REGISTER);
		pthread_mutex_unlock(&q->lock);
		return true;
	case -ENOTCONN:
	case -ECONNABORTED:
	case -ENODEV:
		return false;	/* unmounted */
	default:
		/* An entry refused: the queue serves with the others. */
		if (e->commit_id == 0) {
			log_err("fuse_uring: queue %u: an entry not "
				"registered: %s", q->qid, strerror(-cqe->res));
			return true;
		}
		/* A reply the kernel did not take: its caller would wait
		 * for ever, so the mount ends. */
		log_err("fuse_uring: queue %u: %s", q->qid,
			strerror(-cqe->res));
		fuse_session_exit(fusering.se);
		return false;
	}
}

static void *fusering_main(void *arg)
{
	struct fusering_queue *q = arg;
	struct io_uring_cqe *cqe;
	cpu_set_t cpu;
	bool more = true;

	fusering_self = q;
	/* Near the processes whose requests this queue takes. */
	CPU_ZERO(&cpu);
	CPU_SET(q->qid, &cpu);
	if (sched_setaffinity(0, sizeof cpu, &cpu) != 0)
		log_debug("fuse_uring: queue %u: not pinned to its CPU: %s",
			  q->qid, strerror(errno));
	while (more) {
		unsigned head, n = 0;
		int err;

		pthread_mutex_lock(&q->lock);
		io_uring_submit(&q->ring);
		pthread_mutex_unlock(&q->lock);
		err = io_uring_wait_cqe(&q->ring, &cqe);
		if (err == -EINTR)
			continue;
		if (err < 0) {
			log_err("fuse_uring: queue %u: %s", q->qid,
				strerror(-err));
			break;
		}
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			q->seen = ++n;
			if (more)
				more = fusering_cqe(q, cqe);
		}
		io_uring_cq_advance(&q->ring, n);
	}
	/* Commits its last requests queued. */
	pthread_mutex_lock(&q->lock);
	io_uring_submit(&q->ring);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* q's ring, entries and eventfd; 0 or -errno. */
static int fusering_queue_init(struct fusering_queue *q, unsigned qid)
{
	struct io_uring_sqe *sqe;
	unsigned i;
	int err;

	q->qid = qid;
	q->ents = calloc(fusering.depth, sizeof *q->ents);
	if (q->ents == NULL)
		return -ENOMEM;
	err = io_uring_queue_init(fusering.depth + 1, &q->ring,
				  IORING_SETUP_SQE128);
	if (err < 0) {
		q->ring.ring_fd = -1;
		return err;
	}
	q->efd = eventfd(0, EFD_CLOEXEC);
	if (q->efd < 0)
		return -errno;
	for (i = 0; i < fusering.depth; i++) {
		struct fusering_ent *e = &q->ents[i];
		char *block = mmap(NULL, fusering.block,
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (block == MAP_FAILED)
			return -errno;
		e->q = q;
		e->hdr = (struct fusering_header *)block;
		e->payload = block + fusering.block - fusering.payload;
		e->iov[0] = (struct iovec){ e->hdr, sizeof *e->hdr };
		e->iov[1] = (struct iovec){ e->payload, fusering.payload };
		do_fusering_prep(q, e, FUSERING_REGISTER);
	}
	sqe = io_uring_get_sqe(&q->ring);
	if (sqe == NULL)
		return -ENOMEM;
	io_uring_prep_read(sqe, q->efd, &q->efd_count, sizeof q->efd_count, 0);
	io_uring_sqe_set_data(sqe, &q->efd);
	return 0;
}

int fusering_start(struct fuse_session *se, int fd, size_t payload)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned i;
	int err = 0;

	fusering.se = se;
	fusering.fd = fd;
	fusering.nr_queues = (unsigned)get_nprocs_conf();
	/* Our page for the request's headers, then the payload. */
	fusering.payload = (payload + (size_t)page - 1) & ~((size_t)page - 1);
	fusering.block = 2 * (size_t)page + fusering.payload;
	fusering.queues = calloc(fusering.nr_queues, sizeof *fusering.queues);
	if (fusering.queues == NULL)
		return -ENOMEM;
	/* What fusering_stop undoes, for queues never set up too. */
	for (i = 0; i < fusering.nr_queues; i++) {
		fusering.queues[i].ring.ring_fd = -1;
		fusering.queues[i].efd = -1;
		pthread_mutex_init(&fusering.queues[i].lock, NULL);
	}
	for (i = 0; i < fusering.nr_queues && err == 0; i++)
		err = fusering_queue_init(&fusering.queues[i], i);
	/* Replies may be ours from the first request the ring brings. */
	if (err == 0)
		atomic_store_explicit(&fusering.on, true,
				      memory_order_release);
	for (i = 0; i < fusering.nr_queues && err == 0; i++) {
		struct fusering_queue *q = &fusering.queues[i];

		err = loop_thread_create(&q->thread, fusering_main, q,
					 "iosched-fring");
		q->started = err == 0;
	}
	if (err != 0) {
		log_err("fuse_uring: %s: requests come through /dev/fuse",
			strerror(-err));
		return err;
	}
	log_info("fuse_uring: %u queues of %u entries, %zu bytes each",
		 fusering.nr_queues, fusering.depth, fusering.payload);
	return 0;
}

void fusering_quiesce(void)
{
	uint64_t one = 1;
	unsigned i;

	for (i = 0; i < fusering.nr_queues; i++) {
		struct fusering_queue *q = &fusering.queues[i];

		if (!q->started)
			continue;
		if (write(q->efd, &one, sizeof one) != sizeof one)
			log_err("fuse_uring: queue %u: %s", i,
				strerror(errno));
		pthread_join(q->thread, NULL);
		q->started = false;
	}
}

void fusering_stop(void)
{
	uint64_t served = 0;
	unsigned i, j;

	if (fusering.queues == NULL)
		return;
	fusering_quiesce();
	atomic_store(&fusering.on, false);
	for (i = 0; i < fusering.nr_queues; i++)
		served += fusering.queues[i].served;
	log_info("fuse_uring: %llu requests came through the ring",
		 (unsigned long long)served);
	for (i = 0; i < fusering.nr_queues; i++) {
		struct fusering_queue *q = &fusering.queues[i];

		if (q->ring.ring_fd >= 0)
			io_uring_queue_exit(&q->ring);
		if (q->efd >= 0)
			close(q->efd);
		for (j = 0; q->ents != NULL && j < fusering.depth; j++)
			if (q->ents[j].hdr != NULL)
				munmap(q->ents[j].hdr, fusering.block);
		free(q->ents);
		pthread_mutex_destroy(&q->lock);
	}
	free(fusering.queues);
	fusering.queues = NULL;
}

#else	/* !HAVE_LIBURING: main.c refuses fuse_uring before mounting */

int fusering_probe(char *err, size_t size)
{
	snprintf(err, size, "fuse_uring: built without liburing");
	return -1;
}
void fusering_configure(unsigned depth) { (void)depth; }
bool fusering_wanted(void) { return false; }
bool fusering_busy(void) { return false; }
bool fusering_stable(const void *data) { (void)data; return false; }
bool fusering_reply(const struct iovec *iov, int count)
{
	(void)iov;
	(void)count;
	return false;
}
int fusering_start(struct fuse_session *se, int fd, size_t payload)
{
	(void)se;
	(void)fd;
	(void)payload;
	return -ENOSYS;
}
void fusering_quiesce(void) {}
void fusering_stop(void) {}

#endif
