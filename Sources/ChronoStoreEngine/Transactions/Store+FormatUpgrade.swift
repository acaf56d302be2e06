// Upgrading a version 1 file to version 2 in place, at the first write: preamble copy, then preamble.

extension FilePreamble {
    /// Where an upgrade writes the new preamble first (a sector page 0 leaves zero otherwise).
    static let copyOffset = 1536

    /// The preamble at offset 0 or, when that one is torn (wrong magic or checksum), the copy an
    /// interrupted upgrade wrote at ``copyOffset``.
    static func decodeWithCopy(_ bytes: UnsafeRawBufferPointer, path: String) throws -> FilePreamble {
        do {
            return try decode(bytes, path: path)
        } catch StoreError.notAStore where bytes.count >= copyOffset + byteCount {
            guard let copy = try? decode(UnsafeRawBufferPointer(rebasing: bytes[copyOffset...]), path: path),
                copy.formatVersion >= 2
            else { throw StoreError.notAStore(path: path) }
            return copy
        }
    }
}

extension Store {
    /// Makes a version 1 file a version 2 file before the first write that could pack history.
    ///
    /// Crash-safe in two synced steps: the version 2 preamble goes into the unused sector at
    /// offset 1536 of page 0, then over the preamble at offset 0. A crash during the second write
    /// leaves a torn preamble, and readers take the copy; a crash before it leaves version 1,
    /// and the next write repeats the upgrade. Nothing of version 2 is written before both syncs.
    /// Called with the writer held.
    func upgradeFormatIfNeeded() throws {
        guard formatVersion < FilePreamble.currentFormatVersion else { return }
        var upgraded = preamble
        upgraded.formatVersion = FilePreamble.currentFormatVersion
        var bytes = [UInt8](repeating: 0, count: FilePreamble.byteCount)
        bytes.withUnsafeMutableBytes { upgraded.encode(into: $0) }
        do {
            try bytes.withUnsafeBytes { try pageFile.file.write($0, at: UInt64(FilePreamble.copyOffset)) }
            try pageFile.file.synchronize()
            try bytes.withUnsafeBytes { try pageFile.file.write($0, at: 0) }
            try pageFile.file.synchronize()
        } catch let error as IOError {
            throw StoreError.io(error)
        }
        lock.withLock { upgradedFormatVersion = FilePreamble.currentFormatVersion }
    }
}
