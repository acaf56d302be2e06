// The seam between the engine and storage: positional reads and writes plus a durability barrier.

/// Random-access storage for a store's data file.
///
/// The engine reaches the disk only through this protocol, so tests can put a fault-injecting
/// in-memory file (``FaultInjectingFile``) in place of ``PosixFile``.
/// Implementations must be safe to call from several threads at once: reads may run
/// concurrently with each other and with one writer.
package protocol StoreFile: AnyObject, Sendable {
    /// A name for error messages (the path, or a label for in-memory files).
    var name: String { get }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read
    /// (fewer only at the end of the file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int

    /// Writes all of `bytes` at `offset`, extending the file if needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws

    /// Makes every completed write durable (one `fdatasync`, or `F_FULLFSYNC` on Darwin).
    func synchronize() throws

    /// The file's length in bytes.
    func byteCount() throws -> UInt64

    /// Sets the file's length, discarding or zero-extending its tail.
    func truncate(to byteCount: UInt64) throws
}

extension StoreFile {
    /// Reads exactly `buffer.count` bytes or reports how many were missing.
    func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Bool {
        var done = 0
        while done < buffer.count {
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            let count = try read(into: slice, at: offset + UInt64(done))
            if count == 0 { return false }
            done += count
        }
        return true
    }
}
