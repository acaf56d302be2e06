// System calls that the Swift overlays of the C library do not import.
#ifndef CHRONO_SYSTEM_H
#define CHRONO_SYSTEM_H

#include <stdint.h>

/// The device and inode number of the file `path` names (following symbolic links). Returns 0,
/// or -1 with errno set.
///
/// On Linux it asks `statx` for the inode number only. A plain `stat` also reports the file's
/// change and modification times, and since Linux 6.13 reporting them makes the file's next
/// write stamp a fine-grained time, which dirties the inode; on ext4 without a journal, every
/// `fdatasync` after that writes the inode's table block and waits for it (a whole extra trip
/// to the device for each commit). Elsewhere, and wherever `statx` fails, it calls `stat`.
int chrono_path_identity(const char *path, uint64_t *device, uint64_t *inode);

/// The length of the open file `descriptor`, asking for the size only (see
/// `chrono_path_identity` for why not `fstat`). Returns 0, or -1 with errno set.
int chrono_descriptor_size(int descriptor, int64_t *size);

#endif
