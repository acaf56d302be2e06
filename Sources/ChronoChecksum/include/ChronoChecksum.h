// Hardware CRC-32C for the engine's page checksums, where the processor has it.
#ifndef CHRONO_CHECKSUM_H
#define CHRONO_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// Whether chrono_crc32c_hardware can run on this processor (SSE 4.2 on x86-64, CRC on arm64).
int chrono_crc32c_hardware_available(void);

/// Continues a CRC-32C (Castagnoli) over `count` bytes: pass the running value (initially
/// 0xFFFFFFFF), XOR the result with 0xFFFFFFFF at the end. Only call when available.
uint32_t chrono_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

#endif
