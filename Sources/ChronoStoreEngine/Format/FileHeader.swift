// Page 0: the preamble that identifies a store, and the two slots that name its newest state.

/// The file header occupies page 0 (the first `pageSize` bytes).
///
/// Preamble, written once at creation (little-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `89 43 48 52 4E 0D 0A 1A` ("\x89CHRN\r\n\x1A") |
/// | 8 | 4 | format version |
/// | 12 | 4 | page size in bytes |
/// | 16 | 8 | creation time, milliseconds since 1970 |
/// | 24 | 16 | store identifier (random) |
/// | 40 | 20 | reserved (0) |
/// | 60 | 4 | CRC-32C of bytes 0 ..< 60 |
///
/// Two slots follow, each in its own 512-byte sector (at 512 and 1024); see ``HeaderSlot``.
package struct FilePreamble: Equatable, Sendable {
    package static let magic: [UInt8] = [0x89, 0x43, 0x48, 0x52, 0x4E, 0x0D, 0x0A, 0x1A]
    package static let currentFormatVersion: UInt32 = 5

    static let magicOffset = 0
    static let versionOffset = magicOffset + 8
    static let pageSizeOffset = versionOffset + 4
    static let creationTimeOffset = pageSizeOffset + 4
    static let identifierOffset = creationTimeOffset + 8
    static let reservedOffset = identifierOffset + 16
    static let checksumOffset = reservedOffset + 20
    package static let byteCount = checksumOffset + 4

    package var formatVersion: UInt32
    package var pageSize: Int
    package var creationMilliseconds: Int64
    package var identifier: [UInt8]

    package init(formatVersion: UInt32, pageSize: Int, creationMilliseconds: Int64, identifier: [UInt8]) {
        self.formatVersion = formatVersion
        self.pageSize = pageSize
        self.creationMilliseconds = creationMilliseconds
        self.identifier = identifier
    }

    package func encode(into bytes: UnsafeMutableRawBufferPointer) {
        for (index, byte) in Self.magic.enumerated() { bytes[Self.magicOffset + index] = byte }
        bytes.storeLittleEndian(formatVersion, at: Self.versionOffset)
        bytes.storeLittleEndian(UInt32(pageSize), at: Self.pageSizeOffset)
        bytes.storeLittleEndian(creationMilliseconds, at: Self.creationTimeOffset)
        for index in 0..<16 { bytes[Self.identifierOffset + index] = index < identifier.count ? identifier[index] : 0 }
        for index in Self.reservedOffset..<Self.checksumOffset { bytes[index] = 0 }
        let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<Self.checksumOffset]))
        bytes.storeLittleEndian(checksum, at: Self.checksumOffset)
    }

    /// Parses and validates a preamble.
    /// - Throws: ``StoreError/notAStore(path:)`` when the magic or checksum is wrong,
    ///   ``StoreError/unsupportedFormatVersion(found:supported:)`` for a newer format, and
    ///   ``StoreError/invalidPageSize(_:)`` for an impossible page size.
    package static func decode(_ bytes: UnsafeRawBufferPointer, path: String) throws -> FilePreamble {
        guard bytes.count >= byteCount, Array(bytes[0..<8]) == magic else { throw StoreError.notAStore(path: path) }
        let stored: UInt32 = bytes.loadLittleEndian(at: checksumOffset)
        guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<checksumOffset])) else {
            throw StoreError.notAStore(path: path)
        }
        let version: UInt32 = bytes.loadLittleEndian(at: versionOffset)
        guard version <= currentFormatVersion, version >= 1 else {
            throw StoreError.unsupportedFormatVersion(found: version, supported: currentFormatVersion)
        }
        let pageSize = Int(bytes.loadLittleEndian(at: pageSizeOffset, as: UInt32.self))
        try PageSize.validate(pageSize)
        return FilePreamble(
            formatVersion: version, pageSize: pageSize,
            creationMilliseconds: bytes.loadLittleEndian(at: creationTimeOffset),
            identifier: Array(bytes[identifierOffset..<(identifierOffset + 16)]))
    }
}

/// One of the two header slots that name the newest state record.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | sequence number (the larger valid one wins) |
/// | 8 | 8 | state record page |
/// | 16 | 8 | state record transaction (its birth) |
/// | 24 | 1 | flags: bit 0 = verified (the state was checked and synced; open may skip recovery); bit 1 = durable (the state was synced before this slot was written: set on verified marks); bit 2 = sync pending (its writer syncs right after writing it; until the lock file records that sync as done, other processes must not adopt it) |
/// | 25 | 35 | reserved (0) |
/// | 60 | 4 | CRC-32C of bytes 0 ..< 60 |
package struct HeaderSlot: Equatable, Sendable {
    package static let offsets = [512, 1024]
    static let sequenceOffset = 0
    static let stateOffset = sequenceOffset + 8
    static let transactionOffset = stateOffset + 8
    static let flagsOffset = transactionOffset + 8
    static let checksumOffset = 60
    package static let byteCount = checksumOffset + 4

    package var sequence: UInt64
    package var state: PageReference
    package var isVerified: Bool
    package var isDurable: Bool
    /// Set on a commit's slot when its writer syncs right after writing it. The slot is never
    /// rewritten; the lock file's synced sequence says when that sync succeeded.
    package var isSyncPending: Bool

    package init(sequence: UInt64, state: PageReference, isVerified: Bool, isDurable: Bool, isSyncPending: Bool = false) {
        self.sequence = sequence
        self.state = state
        self.isVerified = isVerified
        self.isDurable = isDurable
        self.isSyncPending = isSyncPending
    }

    package func encode(into bytes: UnsafeMutableRawBufferPointer) {
        for index in 0..<Self.byteCount { bytes[index] = 0 }
        bytes.storeLittleEndian(sequence, at: Self.sequenceOffset)
        bytes.storeReference(state, at: Self.stateOffset)
        bytes.storeLittleEndian(UInt8((isVerified ? 1 : 0) | (isDurable ? 2 : 0) | (isSyncPending ? 4 : 0)), at: Self.flagsOffset)
        let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<Self.checksumOffset]))
        bytes.storeLittleEndian(checksum, at: Self.checksumOffset)
    }

    /// The slot in `bytes`, or nil when its checksum fails or it names no state.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> HeaderSlot? {
        guard bytes.count >= byteCount else { return nil }
        let stored: UInt32 = bytes.loadLittleEndian(at: checksumOffset)
        guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<checksumOffset])) else { return nil }
        let state = bytes.loadReference(at: stateOffset)
        guard !state.isNone else { return nil }
        let flags: UInt8 = bytes.loadLittleEndian(at: flagsOffset)
        return HeaderSlot(
            sequence: bytes.loadLittleEndian(at: sequenceOffset), state: state, isVerified: flags & 1 != 0,
            isDurable: flags & 2 != 0, isSyncPending: flags & 4 != 0)
    }
}

extension HeaderSlot {
    /// Whether this slot's state is known to be on disk, or was never meant to be synced by its
    /// writer (deferred mode), given the highest sequence whose sync is known to have succeeded.
    package func isSynced(upTo syncedSequence: UInt64) -> Bool {
        !isSyncPending || isVerified || sequence <= syncedSequence
    }

    /// Whether this slot's state is known durable: verified, written after a sync, or its
    /// writer's sync is known to have succeeded.
    package func isKnownDurable(syncedUpTo syncedSequence: UInt64) -> Bool {
        isDurable || isVerified || (isSyncPending && sequence <= syncedSequence)
    }
}
