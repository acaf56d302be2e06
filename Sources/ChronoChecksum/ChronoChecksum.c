// Hardware CRC-32C: the crc32 instruction (SSE 4.2 on x86-64, the CRC extension on arm64), run as
// three interleaved chains over long buffers.
#include "ChronoChecksum.h"
#include <stdatomic.h>
#include <string.h>

// Why three chains. The crc32 instruction takes about 3 cycles to give its result, but the processor
// can start a new one every cycle. One chain over the buffer waits for each result before the next
// step, so it runs at a third of the instruction's throughput. Long buffers are therefore cut into
// three consecutive blocks A, B and C of n bytes each (plus a tail of under 24 bytes), and one loop
// runs three independent chains: A from the incoming register, B and C from 0. CRC is linear over
// GF(2), and feeding n more bytes multiplies the register by x^(8n) before adding those bytes' own
// contribution, so the register after A ‖ B ‖ C is
//
//     crc(A) · x^(16n)  XOR  crc(B) · x^(8n)  XOR  crc(C)      (mod P)
//
// The factors x^(8n) mod P and x^(16n) mod P depend only on n: they are computed by repeated squaring,
// cached per block length, and fetched before the loop so the processor overlaps them with it. Each
// product is a carry-less multiply (PCLMULQDQ on x86-64, PMULL on arm64) reduced with the crc32
// instruction itself. Without a carry-less multiply, every length uses the single chain.
//
// Bit order: like the register, every 32-bit polynomial here is reflected: bit 31 holds the
// coefficient of x^0 and bit 0 that of x^31. P is x^32 + 0x1EDC6F41, reflected 0x82F63B78.

// MARK: - Platform primitives

#if defined(__x86_64__)
#include <immintrin.h>

#define CHRONO_HAS_CRC_INSTRUCTION 1
#define CHRONO_HAS_CARRYLESS_MULTIPLY 1
#define CHRONO_CRC_TARGET __attribute__((target("sse4.2")))
#define CHRONO_INTERLEAVED_TARGET __attribute__((target("sse4.2,pclmul")))

/// The register after feeding it one 8-byte word.
CHRONO_CRC_TARGET static inline uint32_t crcOfWord(uint32_t crc, uint64_t word) {
    return (uint32_t)__builtin_ia32_crc32di(crc, word);
}

/// The register after feeding it one 4-byte value.
CHRONO_CRC_TARGET static inline uint32_t crcOfUInt32(uint32_t crc, uint32_t value) {
    return __builtin_ia32_crc32si(crc, value);
}

/// The register after feeding it one byte.
CHRONO_CRC_TARGET static inline uint32_t crcOfByte(uint32_t crc, uint8_t byte) {
    return __builtin_ia32_crc32qi(crc, byte);
}

/// The 63-bit carry-less product of two 32-bit values.
CHRONO_INTERLEAVED_TARGET static inline uint64_t carrylessMultiply(uint32_t a, uint32_t b) {
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0x00);
    return (uint64_t)_mm_cvtsi128_si64(product);
}

/// Callers have checked SSE 4.2 (chrono_crc32c_hardware_available); PCLMULQDQ came one processor
/// generation later (Westmere after Nehalem), so it is checked on its own.
static int carrylessMultiplyAvailable(void) { return __builtin_cpu_supports("pclmul"); }

int chrono_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

#define CHRONO_HAS_CRC_INSTRUCTION 1
#define CHRONO_CRC_TARGET
#define CHRONO_INTERLEAVED_TARGET

/// The register after feeding it one 8-byte word.
static inline uint32_t crcOfWord(uint32_t crc, uint64_t word) { return __crc32cd(crc, word); }

/// The register after feeding it one byte.
static inline uint32_t crcOfByte(uint32_t crc, uint8_t byte) { return __crc32cb(crc, byte); }

// PMULL is part of the AES extension, which every Apple arm64 processor has; some other cores
// (the Raspberry Pi 4's, for one) have CRC but not AES, and keep the single chain.
#if defined(__ARM_FEATURE_AES) || defined(__ARM_FEATURE_CRYPTO)
#include <arm_neon.h>
#define CHRONO_HAS_CARRYLESS_MULTIPLY 1

/// The register after feeding it one 4-byte value (only the join needs it).
static inline uint32_t crcOfUInt32(uint32_t crc, uint32_t value) { return __crc32cw(crc, value); }

/// The 63-bit carry-less product of two 32-bit values.
static inline uint64_t carrylessMultiply(uint32_t a, uint32_t b) {
    return (uint64_t)vmull_p64((poly64_t)a, (poly64_t)b);
}

static int carrylessMultiplyAvailable(void) { return 1; }
#endif

int chrono_crc32c_hardware_available(void) { return 1; }

#endif

#if defined(CHRONO_HAS_CRC_INSTRUCTION)

/// Eight bytes from `bytes`, at any alignment, in the little-endian order both platforms use.
static inline uint64_t loadWord(const unsigned char *bytes) {
    uint64_t word;
    memcpy(&word, bytes, 8);
    return word;
}

/// One dependent chain: for short buffers, the tail after the three blocks, and processors without
/// a carry-less multiply.
CHRONO_CRC_TARGET static uint32_t crcOfSingleChain(uint32_t crc, const unsigned char *cursor, size_t count) {
    while (count >= 8) {
        crc = crcOfWord(crc, loadWord(cursor));
        cursor += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = crcOfByte(crc, *cursor);
        cursor += 1;
        count -= 1;
    }
    return crc;
}

// MARK: - Three interleaved chains

#if defined(CHRONO_HAS_CARRYLESS_MULTIPLY)

/// Buffers shorter than this use the single chain. The three chains save about two cycles per
/// 8-byte word but add a fixed cost (the factor lookup, the join, the tail); on an x86-64 server
/// (AMD EPYC) they break even near 320 bytes with the factor cached and near 512 without.
static const size_t interleavedMinimumByteCount = 3 * 128;

/// a · b mod P.
CHRONO_INTERLEAVED_TARGET static uint32_t multiplyModP(uint32_t a, uint32_t b) {
    // In the reflected order the carry-less product holds x^62 at bit 0 down to x^0 at bit 62.
    // Shifted left by one it is a 64-bit reflected polynomial: the low half holds x^63 ... x^32 (a
    // 32-bit value L standing for L · x^32) and the high half x^31 ... x^0, already reduced.
    uint64_t product = carrylessMultiply(a, b) << 1;
    // Feeding the crc32 instruction L from a zero register gives L · x^32 mod P.
    return crcOfUInt32(0, (uint32_t)product) ^ (uint32_t)(product >> 32);
}

/// x^(8 · byteCount) mod P: the factor that carries a register past byteCount more bytes.
CHRONO_INTERLEAVED_TARGET static uint32_t shiftFactor(size_t byteCount) {
    uint32_t factor = 0x80000000u;  // x^0
    uint32_t power = 0x00800000u;   // x^8, one byte; squared at each step to x^16, x^32, ...
    for (size_t remaining = byteCount; remaining != 0; remaining >>= 1) {
        if (remaining & 1) factor = multiplyModP(factor, power);
        if (remaining > 1) power = multiplyModP(power, power);
    }
    return factor;
}

/// Factors already computed, keyed by block length. A store checksums few lengths (its page size less
/// the 4-byte checksum field), and computing a factor costs about 60 cycles that the loop does not
/// hide, a tenth of a 4 KiB page. A slot packs the block length in 8-byte words (high half) with its
/// factor (low half), so one relaxed atomic load always sees a matching pair; threads racing for a
/// slot at worst evict each other's entry, which costs a recomputation and never a wrong factor.
/// Zero means empty: no block is 0 words long.
static _Atomic uint64_t factorCache[16];

/// shiftFactor(blockByteCount), from factorCache when there.
CHRONO_INTERLEAVED_TARGET static uint32_t cachedShiftFactor(size_t blockByteCount) {
    uint64_t wordCount = blockByteCount / 8;
    if (wordCount > UINT32_MAX) return shiftFactor(blockByteCount);
    // Fibonacci hashing: the top 4 bits of the low 32 bits of wordCount × 0x9E3779B1 (2^32 over the
    // golden ratio) put the page sizes 2 KiB to 64 KiB in distinct slots.
    _Atomic uint64_t *slot = &factorCache[(uint32_t)(wordCount * 0x9E3779B1u) >> 28];
    uint64_t entry = atomic_load_explicit(slot, memory_order_relaxed);
    if (entry >> 32 == wordCount) return (uint32_t)entry;
    uint32_t factor = shiftFactor(blockByteCount);
    atomic_store_explicit(slot, wordCount << 32 | factor, memory_order_relaxed);
    return factor;
}

/// The register after three consecutive blocks of `blockByteCount` bytes (a multiple of 8) from
/// `start`, with one chain per block.
CHRONO_INTERLEAVED_TARGET
static uint32_t crcOfThreeBlocks(uint32_t crc, const unsigned char *start, size_t blockByteCount) {
    // The factors first, in program order: they do not depend on the bytes, so the processor works
    // on them while the loop's first iterations run.
    uint32_t pastOneBlock = cachedShiftFactor(blockByteCount);
    uint32_t pastTwoBlocks = multiplyModP(pastOneBlock, pastOneBlock);
    const unsigned char *first = start;
    const unsigned char *second = first + blockByteCount;
    const unsigned char *third = second + blockByteCount;
    uint32_t crcFirst = crc;
    uint32_t crcSecond = 0;
    uint32_t crcThird = 0;
    for (size_t offset = 0; offset < blockByteCount; offset += 8) {
        crcFirst = crcOfWord(crcFirst, loadWord(first + offset));
        crcSecond = crcOfWord(crcSecond, loadWord(second + offset));
        crcThird = crcOfWord(crcThird, loadWord(third + offset));
    }
    return multiplyModP(crcFirst, pastTwoBlocks) ^ multiplyModP(crcSecond, pastOneBlock) ^ crcThird;
}

#endif

// MARK: - Entry point

uint32_t chrono_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *cursor = bytes;
#if defined(CHRONO_HAS_CARRYLESS_MULTIPLY)
    if (count >= interleavedMinimumByteCount && carrylessMultiplyAvailable()) {
        // Three equal blocks of whole words; the tail (under 24 bytes) goes to the single chain.
        size_t blockByteCount = count / 24 * 8;
        crc = crcOfThreeBlocks(crc, cursor, blockByteCount);
        cursor += 3 * blockByteCount;
        count -= 3 * blockByteCount;
    }
#endif
    return crcOfSingleChain(crc, cursor, count);
}

#else

uint32_t chrono_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

int chrono_crc32c_hardware_available(void) { return 0; }

#endif
