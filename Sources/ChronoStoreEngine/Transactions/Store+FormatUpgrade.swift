// Upgrading an older file to the current version in place, at the first write: preamble copy, then preamble.

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
    /// Makes an older file (version 1 or 2) a file of the current version before a write that
    /// could use what the newer version adds (packed history from version 2, birth-first pack
    /// index keys and chain starts from version 3).
    ///
    /// Crash-safe in two synced steps: the new preamble goes into the unused sector at offset
    /// 1536 of page 0, then over the preamble at offset 0. A crash during the second write
    /// leaves a torn preamble, and readers take the copy; a crash before it leaves the old
    /// version, and the next write repeats the upgrade. Nothing of the new version is written
    /// before both syncs.
    ///
    /// Only when no other open handle (of this process or another) has the store open: an older
    /// library checks the version only when it opens, so one that already has the file open
    /// would misread what the new version writes. Until then writes stay within the old version
    /// (no packing in a version 1 file; page-first keys and no chain starts in a version 2 one),
    /// and a later write upgrades. Called with the writer held.
    func upgradeFormatIfNeeded() throws {
        guard formatVersion < FilePreamble.currentFormatVersion else { return }
        if let fileLocks {
            do {
                if try fileLocks.isOpenElsewhere() { return }
            } catch let error as IOError {
                throw StoreError.io(error)
            }
        }
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
