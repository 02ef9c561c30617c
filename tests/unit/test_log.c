/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c: a level out of the syslog range (a module may pass any int) is
 * clamped, not used as a table index; liblog.c: libfuse's and libevent's
 * messages come out through our log, one line each, marked with their
 * level.
 *
 * stderr goes to a temporary file, read back after each case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	size_t n;

	fflush(stderr);
	rewind(out);
	n = fread(buf, 1, sizeof buf - 1, out);
	buf[n] = '\0';
	rewind(out);
	if (ftruncate(fileno(out), 0) != 0)
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
	return failures ? 1 : 0;
}
