// A store file on disk, reached through pread/pwrite and made durable with fdatasync.

/// A data file opened with POSIX calls. Thread-safe: `pread`/`pwrite` carry their own offsets.
package final class PosixFile: StoreFile {
    package let name: String
    /// The open file's descriptor; ``FileLocks`` takes its byte-range locks on it.
    let descriptor: Int32

    /// Opens (and with `create`, creates exclusively) the file at `path`.
    package init(path: String, create: Bool, readOnly: Bool = false) throws {
        var flags = (readOnly ? Platform.readOnly : Platform.readWrite) | Platform.closeOnExec
        if create { flags |= Platform.create | Platform.exclusiveCreate }
        // Reads leave the access time alone where the system lets us (see `Platform.noAccessTime`):
        // a file someone else owns is opened without.
        var descriptor = Platform.open(path, flags: flags | Platform.noAccessTime)
        if descriptor < 0 && Platform.noAccessTime != 0 && Platform.lastError == Platform.notPermitted {
            descriptor = Platform.open(path, flags: flags)
        }
        guard descriptor >= 0 else {
            throw IOError(operation: "open", path: path, code: Platform.lastError)
        }
        self.name = path
        self.descriptor = descriptor
    }

    deinit { _ = Platform.close(descriptor) }

    /// How many hard links the file has (1 when unknown).
    package var linkCount: Int { Platform.linkCount(of: descriptor) ?? 1 }

    /// The device and inode of the open file.
    package func identity() throws -> FileIdentity {
        guard let identity = Platform.identity(of: descriptor) else {
            throw IOError(operation: "fstat", path: name, code: Platform.lastError)
        }
        return identity
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let count = Platform.pread(descriptor, base, buffer.count, Int64(offset))
        guard count >= 0 else { throw IOError(operation: "pread", path: name, code: Platform.lastError) }
        return count
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let count = Platform.pwrite(descriptor, base + done, bytes.count - done, Int64(offset) + Int64(done))
            guard count > 0 else {
                throw IOError(operation: "pwrite", path: name, code: count == 0 ? Platform.noSpace : Platform.lastError)
            }
            done += count
        }
    }

    package func synchronize() throws {
        guard Platform.synchronizeData(descriptor) == 0 else {
            throw IOError(operation: "fdatasync", path: name, code: Platform.lastError)
        }
    }

    package func byteCount() throws -> UInt64 {
        guard let size = Platform.fileSize(descriptor) else {
            throw IOError(operation: "fstat", path: name, code: Platform.lastError)
        }
        return UInt64(size)
    }

    package func truncate(to byteCount: UInt64) throws {
        guard Platform.truncate(descriptor, Int64(byteCount)) == 0 else {
            throw IOError(operation: "ftruncate", path: name, code: Platform.lastError)
        }
    }

    /// Makes the directory holding `path` durable, so a newly created or renamed file survives.
    package static func synchronizeDirectory(containing path: String) throws {
        let directory = parentDirectory(of: path)
        let descriptor = Platform.open(directory, flags: Platform.readOnly | Platform.directory | Platform.closeOnExec)
        guard descriptor >= 0 else { throw IOError(operation: "open", path: directory, code: Platform.lastError) }
        defer { _ = Platform.close(descriptor) }
        guard Platform.synchronizeDirectory(descriptor) == 0 else {
            throw IOError(operation: "fsync", path: directory, code: Platform.lastError)
        }
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }
}
