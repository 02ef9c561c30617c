/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FUSE session loop: libfuse's public fuse_session_receive_buf and
 * fuse_session_process_buf over receive buffers of ours, placed so that a
 * FUSE_WRITE's data lands on a page boundary.  A direct write can then be
 * performed from the buffer it arrived in, and a queued write can take
 * that buffer instead of a copy (loop_adopt; the thread receives into a
 * new one from then on).
 *
 * The threads follow fuse_session_loop_mt's rules (libfuse 3.14): one at
 * the start, one more whenever a request leaves none waiting (FORGETs
 * aside), up to max_threads; with max_idle_threads set, a thread that
 * finds more than that many waiting ends.  Signals that end the session
 * are blocked in them; the main thread waits until the session ends
 * (unmount, a signal), then cancels those blocked in the device's read
 * and joins them all.  -s runs the same loop in the main thread alone.
 * With -o clone_fd (per-thread descriptors, which the public calls cannot
 * read) or a libfuse whose receive size is not known, libfuse's own loop
 * runs, and writes are copied.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* A FUSE_WRITE's data follows these (protocol 7.9 on). */
#define LOOP_WRITE_HDR \
	(sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))

struct loop_thread {
	LIST_ENTRY(loop_thread) link;	/* the lock's */
	pthread_t id;
	char *block;	/* malloc'd; the receive buffer lies in it */
	/*
	 * Here, not on loop_worker's stack: a thread cancelled in the
	 * device's read never returns from that frame, and a sanitizer's
	 * poisoned guard around a local there would stay behind on its
	 * stack (AddressSanitizer then fails the thread's exit).
	 */
	struct fuse_buf fbuf;
};

/* One session per process. */
static struct {
	struct fuse_session *se;
	pthread_mutex_t lock;
	sem_t finish;		/* a thread left at the session's end */
	LIST_HEAD(, loop_thread) threads;	/* joinable ones */
	unsigned workers, avail;	/* the lock's; avail: waiting */
	unsigned max_threads;
	int max_idle;		/* -1: idle threads stay */
	bool exit;		/* the lock's: the main thread is joining */
	atomic_int error;	/* a receive's, read after the joins */
	size_t page, recv, block;
} loop = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static __thread struct loop_thread *loop_self;

/* The receive buffer in block: a write's data at a page boundary. */
static char *loop_buf(char *block)
{
	uintptr_t data = ((uintptr_t)block + LOOP_WRITE_HDR + loop.page - 1) &
			 ~(uintptr_t)(loop.page - 1);

	return (char *)(data - LOOP_WRITE_HDR);
}

bool loop_adoptable(const void *data)
{
	struct loop_thread *t = loop_self;

	return t != NULL &&
	       (const char *)data == loop_buf(t->block) + LOOP_WRITE_HDR;
}

size_t loop_block_size(void)
{
	return loop.block;
}

void *loop_adopt(void)
{
	struct loop_thread *t = loop_self;
	char *fresh = malloc(loop.block);
	char *old;

	if (fresh == NULL)
		return NULL;
	old = t->block;
	t->block = fresh;
	return old;
}

static int loop_start_thread(void);

/* Receive and process requests until the session ends, or until this
 * thread is one idle thread too many. */
static void *loop_worker(void *arg)
{
	struct loop_thread *t = arg;

	loop_self = t;
	while (!fuse_session_exited(loop.se)) {
		unsigned opcode;
		bool forget;
		int res;

		t->fbuf = (struct fuse_buf){
			.mem = loop_buf(t->block),
			.size = loop.recv,
		};
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(loop.se, &t->fbuf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR)
			continue;
		if (res <= 0) {
			if (res < 0) {
				fuse_session_exit(loop.se);
				atomic_store(&loop.error, res);
			}
			break;
		}
		/* A burst of forgets must not start a thread each. */
		opcode = ((const struct fuse_in_header *)t->fbuf.mem)->opcode;
		forget = opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET;
		pthread_mutex_lock(&loop.lock);
		if (loop.exit) {
			pthread_mutex_unlock(&loop.lock);
			return NULL;
		}
		if (!forget)
			loop.avail--;
		if (loop.avail == 0 && loop.workers < loop.max_threads)
			loop_start_thread();
		pthread_mutex_unlock(&loop.lock);

		fuse_session_process_buf(loop.se, &t->fbuf);

		pthread_mutex_lock(&loop.lock);
		if (!forget)
			loop.avail++;
		if (loop.max_idle >= 0 && loop.avail > (unsigned)loop.max_idle &&
		    loop.workers > 1 && !loop.exit) {
			LIST_REMOVE(t, link);
			loop.avail--;
			loop.workers--;
			pthread_mutex_unlock(&loop.lock);
			pthread_detach(pthread_self());
			free(t->block);
			free(t);
			return NULL;
		}
		pthread_mutex_unlock(&loop.lock);
	}
	sem_post(&loop.finish);
	return NULL;
}

int loop_thread_create(pthread_t *id, void *(*fn)(void *), void *arg,
		       const char *name)
{
	sigset_t stop, old;
	int err;

	/* The main thread (or the timer's) takes these. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	err = pthread_create(id, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0)
		return -err;
	pthread_setname_np(*id, name);
	return 0;
}

/* Under the lock: one more thread, with its receive buffer. */
static int loop_start_thread(void)
{
	struct loop_thread *t = calloc(1, sizeof *t);
	int err;

	if (t == NULL || (t->block = malloc(loop.block)) == NULL) {
		free(t);
		log_ratelimited(LOG_ERR, "session thread: %s",
				strerror(ENOMEM));
		return -ENOMEM;
	}
	err = loop_thread_create(&t->id, loop_worker, t, "iosched-fuse");
	if (err != 0) {
		free(t->block);
		free(t);
		log_ratelimited(LOG_ERR, "session thread: %s", strerror(-err));
		return err;
	}
	LIST_INSERT_HEAD(&loop.threads, t, link);
	loop.workers++;
	loop.avail++;
	return 0;
}

/* libfuse's own loops, for what ours cannot serve. */
static int loop_libfuse(struct fuse_session *se,
			const struct fuse_cmdline_opts *opts)
{
	struct fuse_loop_config *lc;
	int ret;

	if (opts->singlethread)
		return fuse_session_loop(se);
	lc = fuse_loop_cfg_create();
	if (lc == NULL)
		return -1;
	fuse_loop_cfg_set_clone_fd(lc, opts->clone_fd);
	/* libfuse leaves these out of range when not given. */
	if (opts->max_idle_threads <= 100000)
		fuse_loop_cfg_set_idle_threads(lc, opts->max_idle_threads);
	if (opts->max_threads > 0 && opts->max_threads <= 100000)
		fuse_loop_cfg_set_max_threads(lc, opts->max_threads);
	ret = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	return ret;
}

int loop_run(struct fuse_session *se, const struct fuse_cmdline_opts *opts)
{
	struct loop_thread *t;
	int err;

	/*
	 * libfuse 3.14 to 3.16 read up to FUSE_MAX_MAX_PAGES (256) pages
	 * and FUSE_BUFFER_HEADER_SIZE (4096) into a buffer, whatever
	 * max_write (their session's bufsize, not public): a later one may
	 * read more than our buffer holds.
	 */
	if (opts->clone_fd || fuse_version() < 314 || fuse_version() > 316)
		return loop_libfuse(se, opts);
	loop.se = se;
	loop.page = (size_t)sysconf(_SC_PAGESIZE);
	loop.recv = 256 * loop.page + 4096;
	loop.block = loop.recv + loop.page;
	loop.max_threads = opts->max_threads > 0 &&
			   opts->max_threads <= 100000 ? opts->max_threads : 10;
	loop.max_idle = opts->max_idle_threads <= 100000 ?
			(int)opts->max_idle_threads : -1;
	LIST_INIT(&loop.threads);
	if (sem_init(&loop.finish, 0, 0) != 0)
		return -errno;

	if (opts->singlethread) {
		struct loop_thread main_thread = { .block = malloc(loop.block) };

		if (main_thread.block == NULL)
			return -ENOMEM;
		loop.max_threads = 1;
		loop.workers = loop.avail = 1;
		loop_worker(&main_thread);
		free(main_thread.block);
	} else {
		pthread_mutex_lock(&loop.lock);
		err = loop_start_thread();
		pthread_mutex_unlock(&loop.lock);
		if (err != 0)
			atomic_store(&loop.error, err);
		/* sem_wait returns early for a signal: its handler ended the
		 * session. */
		while (err == 0 && !fuse_session_exited(se))
			sem_wait(&loop.finish);
		pthread_mutex_lock(&loop.lock);
		LIST_FOREACH(t, &loop.threads, link)
			pthread_cancel(t->id);
		loop.exit = true;
		pthread_mutex_unlock(&loop.lock);
		while ((t = LIST_FIRST(&loop.threads)) != NULL) {
			pthread_join(t->id, NULL);
			pthread_mutex_lock(&loop.lock);
			LIST_REMOVE(t, link);
			pthread_mutex_unlock(&loop.lock);
			free(t->block);
			free(t);
		}
	}
	sem_destroy(&loop.finish);
	fuse_session_reset(se);
	return atomic_load(&loop.error);
}
