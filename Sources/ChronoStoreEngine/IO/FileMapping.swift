// A read-only shared memory map of a data file, unmapped when its last user lets go.

/// The first `byteCount` bytes of a file, mapped read-only and shared (`MAP_SHARED`), so the
/// bytes seen are the file's current bytes: writes made later through `pwrite`, by this
/// process or another, show through the mapping.
///
/// The mapping may be longer than the file (a reservation for growth). Touching a byte past
/// the file's current end raises `SIGBUS`, so callers touch only bytes they know the file holds
/// (see ``PageFile``). Nothing ever writes through a mapping: it is mapped without write
/// permission, so a stray write faults instead of changing the file behind the commit protocol.
///
/// `@unchecked Sendable`: every stored property is immutable, and the mapped bytes are only read.
package final class FileMapping: @unchecked Sendable {
    /// The first mapped byte (file offset 0).
    let base: UnsafeMutableRawPointer
    /// How many bytes of address space the mapping covers (possibly more than the file holds).
    let byteCount: Int

    /// Maps the first `byteCount` bytes of `file`, or returns nil when the system refuses (no
    /// address space, or a file system that cannot map): the caller then reads with `pread`.
    init?(file: PosixFile, byteCount: Int) {
        guard byteCount > 0, let base = Platform.mapShared(file.descriptor, byteCount: byteCount, writable: false) else {
            return nil
        }
        self.base = base
        self.byteCount = byteCount
    }

    deinit { Platform.unmap(base, byteCount: byteCount) }
}
