/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the fuzz targets and fuzz/replay.c.  Each target defines
 * LLVMFuzzerTestOneInput; built with clang -fsanitize=fuzzer it is driven
 * by libFuzzer, built with replay.c (make check) by a plain main() that
 * feeds it saved inputs.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failed invariant: print it and abort, so both drivers report it. */
#define fuzz_assert(cond) do {						\
	if (!(cond))							\
		fuzz_fail(__FILE__, __LINE__, #cond);			\
} while (0)
void fuzz_fail(const char *file, int line, const char *what)
	__attribute__((noreturn));

#endif
