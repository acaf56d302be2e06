// Hardware CRC-32C: the SSE 4.2 crc32 instruction on x86-64, the CRC extension on arm64.
#include "ChronoChecksum.h"
#include <string.h>

#if defined(__x86_64__)

__attribute__((target("sse4.2")))
uint32_t chrono_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *cursor = bytes;
    uint64_t value = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, cursor, 8);
        value = __builtin_ia32_crc32di(value, word);
        cursor += 8;
        count -= 8;
    }
    uint32_t small = (uint32_t)value;
    while (count > 0) {
        small = __builtin_ia32_crc32qi(small, *cursor);
        cursor += 1;
        count -= 1;
    }
    return small;
}

int chrono_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

uint32_t chrono_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *cursor = bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, cursor, 8);
        crc = __crc32cd(crc, word);
        cursor += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = __crc32cb(crc, *cursor);
        cursor += 1;
        count -= 1;
    }
    return crc;
}

int chrono_crc32c_hardware_available(void) { return 1; }

#else

uint32_t chrono_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

int chrono_crc32c_hardware_available(void) { return 0; }

#endif
