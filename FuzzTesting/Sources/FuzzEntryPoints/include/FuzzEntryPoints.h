// Entry points for the fuzz executables; see FuzzEntryPoints.c.
#ifndef FUZZ_ENTRY_POINTS_H
#define FUZZ_ENTRY_POINTS_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver: parses libFuzzer's command-line flags and runs `callback` on each input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
