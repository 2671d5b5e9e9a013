// CRC-32C with the CPU's CRC instructions. The instruction has a latency of about three
// cycles but a throughput of one per cycle, so long inputs are split into three streams run
// side by side and joined afterwards with the constant shift tables (crc32c_shift_tables.h):
// the register after A || B equals shift_|B|(register after A) ^ (register of B from 0).
#include "CTransportCRC32C.h"

#include <string.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#include <nmmintrin.h>
#define CRC32C_HARDWARE 1
#define CRC32C_TARGET __attribute__((target("sse4.2")))
#define CRC32C_STEP64(crc, word) ((uint32_t)_mm_crc32_u64((crc), (word)))
#define CRC32C_STEP8(crc, byte) _mm_crc32_u8((crc), (byte))
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_acle.h>
#define CRC32C_HARDWARE 1
#define CRC32C_TARGET
#define CRC32C_STEP64(crc, word) __crc32cd((crc), (word))
#define CRC32C_STEP8(crc, byte) __crc32cb((crc), (byte))
#endif

#ifdef CRC32C_HARDWARE

#include "crc32c_shift_tables.h"

int blemockkit_crc32c_hardware_available(void) {
#if defined(__x86_64__) || defined(_M_X64)
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
#else
    return 1;
#endif
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, sizeof word);
    return word;  // CRC-32C is defined over bytes in order: little-endian loads keep that order
}

static inline uint32_t shift(const uint32_t table[4][256], uint32_t crc) {
    return table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^ table[2][(crc >> 16) & 0xFF]
        ^ table[3][crc >> 24];
}

// Runs three streams of `block` bytes (a multiple of 8) from `p`, joined into `crc`.
CRC32C_TARGET static inline uint32_t three_streams(
    uint32_t crc, const unsigned char *p, size_t block, const uint32_t table[4][256]) {
    uint32_t a = crc, b = 0, c = 0;
    const unsigned char *end = p + block;
    while (p < end) {
        a = CRC32C_STEP64(a, load64(p));
        b = CRC32C_STEP64(b, load64(p + block));
        c = CRC32C_STEP64(c, load64(p + 2 * block));
        p += 8;
    }
    return shift(table, shift(table, a) ^ b) ^ c;
}

CRC32C_TARGET uint32_t blemockkit_crc32c_hardware_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    while (count >= 3 * CRC32C_LONG_BLOCK) {
        crc = three_streams(crc, p, CRC32C_LONG_BLOCK, crc32c_long_shift);
        p += 3 * CRC32C_LONG_BLOCK;
        count -= 3 * CRC32C_LONG_BLOCK;
    }
    while (count >= 3 * CRC32C_SHORT_BLOCK) {
        crc = three_streams(crc, p, CRC32C_SHORT_BLOCK, crc32c_short_shift);
        p += 3 * CRC32C_SHORT_BLOCK;
        count -= 3 * CRC32C_SHORT_BLOCK;
    }
    while (count >= 8) {
        crc = CRC32C_STEP64(crc, load64(p));
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = CRC32C_STEP8(crc, *p);
        p += 1;
        count -= 1;
    }
    return crc;
}

#else

int blemockkit_crc32c_hardware_available(void) { return 0; }

uint32_t blemockkit_crc32c_hardware_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;  // never called: the software path runs instead
}

#endif
