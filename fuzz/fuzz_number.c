/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: control_parse_number, the parser behind writes to
 * .control/nr_requests and .control/iosched/<tunable>.
 *
 * Input: the first byte picks the upper bound (one of the bounds the
 * daemon uses, edge values, or the next 8 bytes as a raw bound); the rest
 * is the write's bytes.  Besides memory errors (ASan, UBSan), the result
 * is checked against a second, naive parser: the same verdict, the same
 * value, never above the bound.
 *
 *	./configure --enable-fuzzing CC=clang && make
 *	fuzz/fuzz_number -max_total_time=60 fuzz/corpus/number
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fuzz.h"

/* The documented grammar, the slow obvious way. */
static int reference_parse(const char *buf, size_t len, uint64_t max,
			   uint64_t *value)
{
	static const char space[] = " \t\n\v\f\r";
	char digits[32];
	unsigned long long v;
	size_t n = 0;

	while (len > 0 && buf[0] != '\0' && strchr(space, buf[0]) != NULL)
		buf++, len--;
	while (len > 0 && buf[len - 1] != '\0' &&
	       strchr(space, buf[len - 1]) != NULL)
		len--;
	while (n < len && buf[n] >= '0' && buf[n] <= '9')
		n++;
	if (n == 0 || n > 20 || n < len)
		return -EINVAL;
	memcpy(digits, buf, n);
	digits[n] = '\0';
	errno = 0;
	v = strtoull(digits, NULL, 10);
	if (errno != 0 || v > max)
		return -EINVAL;
	*value = v;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t bounds[] = {
		NR_REQUESTS_MAX, INT64_MAX, UINT64_MAX, 0, 1, 9, 10, 99,
		UINT64_MAX / 10, UINT64_MAX / 10 + 1,
	};
	const size_t nb = sizeof bounds / sizeof bounds[0];
	uint64_t max, v = 12345, rv = 54321;
	size_t skip = 1;
	char *buf;
	int ret, rret;

	if (size < 1)
		return 0;
	if (data[0] % (nb + 1) < nb) {
		max = bounds[data[0] % (nb + 1)];
	} else {
		if (size < 9)
			return 0;
		memcpy(&max, data + 1, sizeof max);
		skip = 9;
	}
	/* A copy of exactly the write's length, as control_write passes. */
	buf = malloc(size - skip + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data + skip, size - skip);
	ret = control_parse_number(buf, size - skip, max, &v);
	rret = reference_parse(buf, size - skip, max, &rv);
	fuzz_assert(ret == 0 || ret == -EINVAL);
	fuzz_assert(ret == rret);
	if (ret == 0) {
		fuzz_assert(v <= max);
		fuzz_assert(v == rv);
	} else {
		fuzz_assert(v == 12345);	/* untouched on failure */
	}
	free(buf);
	return 0;
}
