/* fuzz_msccl.c: the libFuzzer entry point of the msccl target (targets.c). */
#include <stdio.h>

#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fuzz_msccl("fuzz", data, size, devnull);
	return 0;
}
