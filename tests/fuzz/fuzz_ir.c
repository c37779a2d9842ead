/* fuzz_ir.c: the libFuzzer entry point of the ir target (targets.c). */
#include <stdio.h>

#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fuzz_ir("fuzz", data, size, devnull);
	return 0;
}
