/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c: a level out of the syslog range (a module may pass any int) is
 * clamped, not used as a table index; liblog.c: libfuse's and libevent's
 * messages come out through our log, one line each, marked with their
 * level.  The ring (.control/log) keeps the newest whole lines, dated,
 * within its size; the log file gets them too and refuses what is not a
 * regular file; a rate-limited call site prints its burst and then
 * counts; a user's value is cut and escaped.
 *
 * stderr goes to a temporary file, read back after each case.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/util.h>
#include <fuse_log.h>

#include "daemon.h"

static int failures;
static FILE *out;

/* What was logged since the last call. */
static const char *logged(void)
{
	static char buf[4096];
	ssize_t n;

	/* By descriptor: stdio's rewind may keep its buffer and offset. */
	fflush(stderr);
	n = pread(fileno(out), buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (ftruncate(fileno(out), 0) != 0 ||
	    lseek(fileno(out), 0, SEEK_SET) != 0)
		perror("ftruncate");
	return buf;
}

static void expect(const char *what, const char *want)
{
	const char *got = logged();

	if (strstr(got, want) == NULL) {
		fprintf(stdout, "FAIL %s: want '%s' in '%s'\n", what, want, got);
		failures++;
	}
}

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stdout, "FAIL %s\n", what);
		failures++;
	}
}

/* Lines of s containing want. */
static unsigned count(const char *s, const char *want)
{
	unsigned n = 0;

	for (; (s = strstr(s, want)) != NULL; s += strlen(want))
		n++;
	return n;
}

static char ring[LOG_RING_SIZE + 1];

static const char *ring_text(void)
{
	size_t n = log_ring_read(ring, LOG_RING_SIZE);

	ring[n] = '\0';
	return ring;
}

static void test_value(void)
{
	char buf[LOG_VALUE_SIZE], big[100000];

	check(strcmp(log_value(buf, sizeof buf, "noop", 4), "noop") == 0,
	      "a plain value is itself");
	check(strcmp(log_value(buf, sizeof buf, "a\x01\\\n\xff", 5),
		     "a\\x01\\x5c\\x0a\\xff") == 0, "bytes escaped");
	memset(big, 'A', sizeof big);
	big[1] = '\x7f';
	log_value(buf, sizeof buf, big, sizeof big);
	check(strlen(buf) < sizeof buf && strncmp(buf, "A\\x7fAAA", 8) == 0 &&
	      strstr(buf, "...(100000 bytes)") != NULL, "a long value cut");
}

/* The ring: dated lines, the newest kept whole within its size. */
static void test_ring(void)
{
	regex_t re;
	const char *r;
	size_t n;
	char small[200];

	log_msg(LOG_WARNING, "first in the ring");
	r = ring_text();
	regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
		"\\.[0-9]{3}[+-][0-9]{4} warning: first in the ring\n$",
		REG_EXTENDED | REG_NEWLINE);
	check(regexec(&re, r, 0, NULL, 0) == 0, "a ring line: time, level");
	regfree(&re);
	for (int i = 0; i < 2000; i++)
		log_msg(LOG_INFO, "line %04d of the flood", i);
	r = ring_text();
	n = strlen(r);
	check(n <= LOG_RING_SIZE && n > LOG_RING_SIZE - 200,
	      "the ring holds its size");
	check(strstr(r, "first in the ring") == NULL, "the oldest line went");
	check(strstr(r, "line 1999 of the flood\n") != NULL, "the newest kept");
	check(count(r, " info: line ") >= 300, "a few hundred lines");
	check(r[4] == '-' && r[n - 1] == '\n', "whole lines only");
	n = log_ring_read(small, sizeof small);
	check(n > 0 && n <= sizeof small && small[n - 1] == '\n' &&
	      memcmp(small + n - 23, "line 1999 of the flood\n", 23) == 0 &&
	      small[4] == '-', "a short read: the newest whole lines");
}

static void test_file(void)
{
	char path[] = "/tmp/test_log.XXXXXX", file[64], link[80], fifo[80];
	char err[256], text[4096], want[64];
	ssize_t n;
	int fd;

	check(mkdtemp(path) != NULL, "mkdtemp");
	snprintf(file, sizeof file, "%s/log", path);
	snprintf(link, sizeof link, "%s/link", path);
	snprintf(fifo, sizeof fifo, "%s/fifo", path);
	check(log_file_open(file, err, sizeof err) == 0, "log_file opens");
	log_msg(LOG_ERR, "to the file");
	fd = open(file, O_RDONLY);
	n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	text[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof want, " fuse-iosched[%ld]: error: to the file\n",
		 (long)getpid());
	check(strstr(text, want) != NULL, "the file's line names the pid");
	if (fd >= 0)
		close(fd);
	check(symlink(file, link) == 0 && mkfifo(fifo, 0600) == 0, "setup");
	check(log_file_open(link, err, sizeof err) != 0, "a symlink refused");
	check(log_file_open(fifo, err, sizeof err) != 0, "a FIFO refused");
	check(!log_file_name_valid("rel/log") && log_file_name_valid("none") &&
	      log_file_name_valid(file), "log_file names");
	unlink(link);
	unlink(fifo);
	unlink(file);
	rmdir(path);
}

/* A flood from one call site: its burst, then silence (counted). */
static void flood(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		log_ratelimited(LOG_WARNING, "the same message");
}

static void test_ratelimit(void)
{
	struct timespec t0, t1;
	const char *got;
	unsigned lines, bound;

	logged();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	flood(1000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	got = logged();
	lines = count(got, "the same message");
	/* Ten an interval (5 s); the machine may be slow. */
	bound = 10 * (unsigned)((t1.tv_sec - t0.tv_sec) / 5 + 2);
	check(lines >= 10 && lines <= bound, "a flood is cut to its burst");
	check(lines == 1000 || count(got, "suppressed") <= lines / 10,
	      "counts only at an interval's end");
}

int main(void)
{
	out = tmpfile();
	if (out == NULL || dup2(fileno(out), STDERR_FILENO) == -1) {
		perror("tmpfile");
		return 99;
	}
	log_open(false, LOG_DEBUG);
	liblog_open();

	log_msg(1000, "too high");
	expect("level 1000", "fuse-iosched: debug: too high\n");
	log_msg(-7, "too low");
	expect("level -7", "fuse-iosched: emerg: too low\n");

	fuse_log(FUSE_LOG_ERR, "from libfuse\n");
	expect("libfuse", "fuse-iosched: error: from libfuse\n");

	/* libevent warns when fcntl fails on a socket it was given. */
	evutil_make_socket_nonblocking(-1);
	expect("libevent", "fuse-iosched: warning: libevent: fcntl(-1");

	log_set_level(LOG_INFO);
	fuse_log(FUSE_LOG_DEBUG, "filtered\n");
	if (strstr(logged(), "filtered") != NULL) {
		fprintf(stdout, "FAIL: a debug message passed the info filter\n");
		failures++;
	}
	check(strstr(ring_text(), "filtered") == NULL, "the ring filters too");

	test_value();
	test_ring();
	test_file();
	test_ratelimit();
	return failures ? 1 : 0;
}
