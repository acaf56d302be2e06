// System calls the Swift overlays do not import.
#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#endif
#include "ChronoSystem.h"

int chrono_start_writeback(int descriptor, int64_t offset, int64_t count) {
#if defined(__linux__)
    return sync_file_range(descriptor, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor;
    (void)offset;
    (void)count;
    return 0;
#endif
}
