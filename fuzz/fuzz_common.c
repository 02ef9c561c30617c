/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every fuzz target shares: how an invariant failure is reported.
 * abort() rather than exit(): libFuzzer saves the input as a crash, and
 * the replay driver dies with a signal the test sees.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, what);
	abort();
}
