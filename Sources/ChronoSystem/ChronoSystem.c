// System calls that the Swift overlays of the C library do not import.
#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/sysmacros.h>
#endif
#include <sys/stat.h>
#include "ChronoSystem.h"

int chrono_path_identity(const char *path, uint64_t *device, uint64_t *inode) {
#if defined(__linux__) && defined(STATX_INO)
    struct statx status;
    if (statx(AT_FDCWD, path, 0, STATX_INO, &status) == 0 && (status.stx_mask & STATX_INO)) {
        *device = (uint64_t)makedev(status.stx_dev_major, status.stx_dev_minor);
        *inode = (uint64_t)status.stx_ino;
        return 0;
    }
    // Any failure falls back to `stat`: kernels before 4.11 lack `statx`, and some sandboxes
    // refuse it; a path that does not resolve fails there too.
#endif
    struct stat fallback;
    if (stat(path, &fallback) != 0) return -1;
    *device = (uint64_t)fallback.st_dev;
    *inode = (uint64_t)fallback.st_ino;
    return 0;
}

int chrono_descriptor_size(int descriptor, int64_t *size) {
#if defined(__linux__) && defined(STATX_SIZE)
    struct statx status;
    if (statx(descriptor, "", AT_EMPTY_PATH, STATX_SIZE, &status) == 0 && (status.stx_mask & STATX_SIZE)) {
        *size = (int64_t)status.stx_size;
        return 0;
    }
#endif
    struct stat fallback;
    if (fstat(descriptor, &fallback) != 0) return -1;
    *size = (int64_t)fallback.st_size;
    return 0;
}
