// The CPU's CRC-32C instructions, for Transport's checksum (see Sources/Transport/CRC32C.swift).
#ifndef CTRANSPORTCRC32C_H
#define CTRANSPORTCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this build and CPU have CRC-32C instructions: SSE 4.2 on x86-64 (checked with
/// CPUID), or the ARMv8 CRC32 extension where the compiler targets it. Returns 1 or 0.
int blemockkit_crc32c_hardware_available(void);

/// Runs the raw CRC-32C register `crc` (reflected, no initial or final inversion) over
/// `count` bytes at `bytes` with the CPU's CRC-32C instructions, three streams at a time.
/// Call it only when blemockkit_crc32c_hardware_available() returned 1.
uint32_t blemockkit_crc32c_hardware_update(uint32_t crc, const void *bytes, size_t count);

#endif
