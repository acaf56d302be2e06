// The root page: one commit of the root chain, with its parent, catalog, label and page lists.

/// Where a page list lives: inline in its owning record, or in a chain of list-chunk pages.
package struct ListDescriptor: Equatable, Sendable {
    /// How many entries the list holds.
    package var count: Int
    /// The first chunk page, or ``PageReference/none`` when the entries are inline.
    package var firstChunk: PageReference

    package static let empty = ListDescriptor(count: 0, firstChunk: .none)
    package static let byteCount = 8 + PageReference.byteCount
    package var isInline: Bool { firstChunk.isNone }
}

/// A commit record: one root of the root chain.
///
/// Root page layout (after the 24-byte page header; little-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 24 | 16 | parent root (page, birth); none for the first root |
/// | 40 | 8 | commit time, milliseconds since 1970 |
/// | 48 | 8 | content source: the root whose trees a revert copied (0 = the parent's, as for any commit) |
/// | 56 | 16 | catalog tree root (none when there are no collections) |
/// | 72 | 24 | invalidated-page list: count, first chunk (none = inline) |
/// | 96 | 24 | introduced-page list: count, first chunk |
/// | 120 | 2 | label byte count (UTF-8, at most 1024) |
/// | 122 | 6 | reserved (0) |
/// | 128 | L | label |
/// | 128+L | 16·n | inline invalidated entries (page, birth), when inline |
/// | … | 16·m | inline introduced entries (page, birth), when inline |
///
/// The page header's birth is the root's transaction id, which is also its public root id.
/// The invalidated list names every committed page this transaction replaced or freed, with the
/// transaction that wrote it (the deadlist entry); the introduced list names every tree and
/// overflow page it wrote.
package struct RootRecord: Equatable, Sendable {
    static let parentOffset = PageHeader.byteCount
    static let timeOffset = parentOffset + PageReference.byteCount
    static let contentSourceOffset = timeOffset + 8
    static let catalogOffset = contentSourceOffset + 8
    static let invalidatedOffset = catalogOffset + PageReference.byteCount
    static let introducedOffset = invalidatedOffset + ListDescriptor.byteCount
    static let labelLengthOffset = introducedOffset + ListDescriptor.byteCount
    static let labelOffset = labelLengthOffset + 8
    package static let maximumLabelByteCount = 1024

    package var transaction: TransactionID
    package var parent: PageReference
    package var timeMilliseconds: Int64
    /// For a revert, the root whose contents it took; `.none` otherwise.
    package var contentSource: TransactionID = .none
    package var catalog: PageReference
    package var label: String?
    package var invalidated: ListDescriptor
    package var introduced: ListDescriptor

    package init(
        transaction: TransactionID, parent: PageReference, timeMilliseconds: Int64, catalog: PageReference,
        label: String?, invalidated: ListDescriptor = .empty, introduced: ListDescriptor = .empty
    ) {
        self.transaction = transaction
        self.parent = parent
        self.timeMilliseconds = timeMilliseconds
        self.catalog = catalog
        self.label = label
        self.invalidated = invalidated
        self.introduced = introduced
    }

    var labelBytes: [UInt8] { label.map { Array($0.utf8) } ?? [] }

    /// The byte offset where inline list entries start.
    var inlineAreaOffset: Int { Self.labelOffset + labelBytes.count }

    /// Encodes the fixed fields and label; inline list entries are written by the list writer.
    package func encode(into bytes: UnsafeMutableRawBufferPointer) {
        bytes.storeReference(parent, at: Self.parentOffset)
        bytes.storeLittleEndian(timeMilliseconds, at: Self.timeOffset)
        bytes.storeLittleEndian(contentSource.rawValue, at: Self.contentSourceOffset)
        bytes.storeReference(catalog, at: Self.catalogOffset)
        Self.store(invalidated, into: bytes, at: Self.invalidatedOffset)
        Self.store(introduced, into: bytes, at: Self.introducedOffset)
        let label = labelBytes
        bytes.storeLittleEndian(UInt16(label.count), at: Self.labelLengthOffset)
        for (index, byte) in label.enumerated() { bytes[Self.labelOffset + index] = byte }
    }

    static func store(_ list: ListDescriptor, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        bytes.storeLittleEndian(UInt64(list.count), at: offset)
        bytes.storeReference(list.firstChunk, at: offset + 8)
    }

    static func loadList(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> ListDescriptor {
        ListDescriptor(
            count: Int(truncatingIfNeeded: bytes.loadLittleEndian(at: offset, as: UInt64.self)),
            firstChunk: bytes.loadReference(at: offset + 8))
    }

    /// Decodes a verified root page.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` when its fields are inconsistent.
    package static func decode(_ page: PageBuffer) throws -> RootRecord {
        let bytes = page.readOnly
        let labelCount = Int(bytes.loadLittleEndian(at: labelLengthOffset, as: UInt16.self))
        guard labelCount <= maximumLabelByteCount, labelOffset + labelCount <= bytes.count else {
            throw StoreError.malformedPage(page: page.pageID, reason: "label length \(labelCount) is out of range")
        }
        let labelBytes = Array(bytes[labelOffset..<(labelOffset + labelCount)])
        var record = RootRecord(
            transaction: page.birth,
            parent: bytes.loadReference(at: parentOffset),
            timeMilliseconds: bytes.loadLittleEndian(at: timeOffset),
            catalog: bytes.loadReference(at: catalogOffset),
            label: labelCount == 0 ? nil : String(decoding: labelBytes, as: UTF8.self),
            invalidated: loadList(bytes, at: invalidatedOffset),
            introduced: loadList(bytes, at: introducedOffset))
        record.contentSource = TransactionID(bytes.loadLittleEndian(at: contentSourceOffset, as: UInt64.self))
        // Counts come from disk: bound them before any arithmetic.
        let capacity = (bytes.count - record.inlineAreaOffset) / PageReference.byteCount
        let pageLimit = Int(UInt32.max)
        guard record.invalidated.count >= 0, record.introduced.count >= 0,
            record.invalidated.count <= pageLimit, record.introduced.count <= pageLimit,
            (record.invalidated.isInline ? record.invalidated.count : 0) + (record.introduced.isInline ? record.introduced.count : 0)
                <= capacity
        else {
            throw StoreError.malformedPage(page: page.pageID, reason: "inline page lists overflow the root page")
        }
        return record
    }
}
