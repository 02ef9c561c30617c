/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ioprio.c: the priority set with ioprio_set(2) is what we read, a process
 * without one gets the best-effort level its nice value implies, pid 0 and
 * vanished processes get the default, and answers are cached briefly.
 * ioprio_pass() gives the calling thread a priority, ioprio_pass_end()
 * its own back, and the real-time class, when refused, becomes
 * best-effort at the same level.
 *
 * Each case uses a fresh child process (so that the cache, keyed by pid,
 * never answers for an earlier case) that waits on a pipe until told to
 * exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"

#define IOPRIO_WHO_PROCESS 1

static int failures;

#define CHECK_PRIO(got, class, level)					\
	do {								\
		int g_ = (got);						\
		if (g_ != IOSCHED_IOPRIO(class, level)) {		\
			fprintf(stderr, "%s:%d: got class %d level %d, "	\
				"want class %d level %d\n", __FILE__,	\
				__LINE__, IOSCHED_IOPRIO_CLASS(g_),	\
				IOSCHED_IOPRIO_LEVEL(g_), class, level); \
			failures++;					\
		}							\
	} while (0)

struct child {
	pid_t pid;
	int release;	/* write end: closing it ends the child */
};

/* A child with the given nice value and, if class >= 0, I/O priority. */
static struct child child_start(int nice_value, int class, int level)
{
	struct child c;
	int ready[2], hold[2];
	char b;

	if (pipe(ready) == -1 || pipe(hold) == -1) {
		perror("pipe");
		exit(99);
	}
	c.pid = fork();
	if (c.pid == -1) {
		perror("fork");
		exit(99);
	}
	if (c.pid == 0) {
		close(ready[0]);
		close(hold[1]);
		if (setpriority(PRIO_PROCESS, 0, nice_value) == -1)
			_exit(98);
		if (class >= 0 &&
		    syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
			    IOSCHED_IOPRIO(class, level)) == -1)
			_exit(97);
		if (write(ready[1], "r", 1) != 1)
			_exit(96);
		/* EOF when the parent lets go. */
		if (read(hold[0], &b, 1) < 0)
			_exit(95);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &b, 1) != 1) {
		fprintf(stderr, "child setup failed (nice %d, class %d)\n",
			nice_value, class);
		exit(99);
	}
	close(ready[0]);
	c.release = hold[1];
	return c;
}

static void child_stop(struct child *c)
{
	close(c->release);
	waitpid(c->pid, NULL, 0);
}

static int thread_prio(void)
{
	return (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
}

static void test_pass(void)
{
	/* The thread's effective priority: class NONE resolved. */
	int own = ioprio_of_pid(getpid());
	pid_t pid;
	int st;

	ioprio_pass(IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_IDLE, 0));
	CHECK_PRIO(thread_prio(), ELV_IOPRIO_CLASS_IDLE, 0);
	ioprio_pass(IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 7));
	CHECK_PRIO(thread_prio(), ELV_IOPRIO_CLASS_BE, 7);
	ioprio_pass_end();
	CHECK_PRIO(thread_prio(), IOSCHED_IOPRIO_CLASS(own),
		   IOSCHED_IOPRIO_LEVEL(own));

	/* Unprivileged (root only can become nobody): RT falls back. */
	if (geteuid() != 0)
		return;
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(77);
		ioprio_pass(IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_RT, 2));
		CHECK_PRIO(thread_prio(), ELV_IOPRIO_CLASS_BE, 2);
		ioprio_pass(IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_RT, 2));
		CHECK_PRIO(thread_prio(), ELV_IOPRIO_CLASS_BE, 2);
		_exit(failures != 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 77)) {
		fprintf(stderr, "%s:%d: unprivileged real-time pass failed\n",
			__FILE__, __LINE__);
		failures++;
	}
}

int main(void)
{
	struct child c;
	pid_t gone;

	log_open(false, LOG_WARNING);

	/* The kernel's own requests, and nonsense. */
	CHECK_PRIO(ioprio_of_pid(0), ELV_IOPRIO_CLASS_BE, 4);
	CHECK_PRIO(ioprio_of_pid(-5), ELV_IOPRIO_CLASS_BE, 4);

	/* Explicit priorities come back as set. */
	c = child_start(0, ELV_IOPRIO_CLASS_BE, 7);
	CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_BE, 7);
	child_stop(&c);
	c = child_start(0, ELV_IOPRIO_CLASS_IDLE, 0);
	CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_IDLE, 0);
	child_stop(&c);
	if (geteuid() == 0) {	/* the real-time class needs privilege */
		c = child_start(0, ELV_IOPRIO_CLASS_RT, 2);
		CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_RT, 2);
		child_stop(&c);
	}

	/* No I/O priority: best effort, (nice + 20) / 5. */
	c = child_start(10, -1, 0);
	CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_BE, 6);
	child_stop(&c);
	c = child_start(19, -1, 0);
	CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_BE, 7);
	child_stop(&c);
	c = child_start(0, -1, 0);
	CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_BE, 4);

	/* Cached: a change is seen only after the entry's lifetime. */
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, c.pid,
		    IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 1)) == 0) {
		CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_BE, 4);
		usleep(150 * 1000);
		CHECK_PRIO(ioprio_of_pid(c.pid), ELV_IOPRIO_CLASS_BE, 1);
	}
	gone = c.pid;
	child_stop(&c);

	/* A process that is gone, once its cache entry has expired. */
	usleep(150 * 1000);
	if (kill(gone, 0) == -1 && errno == ESRCH)
		CHECK_PRIO(ioprio_of_pid(gone), ELV_IOPRIO_CLASS_BE, 4);

	test_pass();

	if (failures != 0) {
		fprintf(stderr, "test_ioprio: %d failures\n", failures);
		return 1;
	}
	printf("test_ioprio: ok\n");
	return 0;
}
