// System calls the Swift overlays do not import.
#ifndef CHRONO_SYSTEM_H
#define CHRONO_SYSTEM_H

#include <stdint.h>

/// Asks the kernel to start writing the file's dirty pages in [offset, offset + count) to the
/// device, without waiting for them (Linux `sync_file_range` with SYNC_FILE_RANGE_WRITE).
/// A hint only: it makes nothing durable. Returns 0, or -1 with errno set; 0 and no effect
/// where the call does not exist.
int chrono_start_writeback(int descriptor, int64_t offset, int64_t count);

#endif
