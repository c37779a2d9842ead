/* fuzz_coll.c: the libFuzzer entry point of the coll target (targets.c). */
#include <stdio.h>

#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fuzz_coll("fuzz", data, size, devnull);
	return 0;
}
