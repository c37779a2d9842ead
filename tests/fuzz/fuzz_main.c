/*
 * fuzz_main.c: the libFuzzer entry point, built once per target with
 * FUZZ_TARGET naming its body in targets.c (fuzz_coll, fuzz_msccl, fuzz_ir,
 * fuzz_sim). Diagnostics go to /dev/null: a reported error is a correct
 * answer to bad input; only a crash, a sanitizer report, a broken
 * invariant, a timeout or running out of memory is a find.
 */
#include <stdio.h>

#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	FUZZ_TARGET("fuzz", data, size, devnull);
	return 0;
}
