// One page's bytes in memory, with header accessors, sealing and verification.

/// A page-sized, 16-byte aligned buffer.
///
/// A buffer is filled and sealed by one thread, then shared read-only through the cache.
/// `@unchecked Sendable`: it is never mutated after ``seal(kind:page:birth:count:)`` or
/// ``verify(page:kind:birth:)`` hands it to other threads.
package final class PageBuffer: @unchecked Sendable {
    package let bytes: UnsafeMutableRawBufferPointer
    /// What owns `bytes` when this buffer is a view into a memory map of the data file (nil
    /// when the buffer allocated them itself). A view keeps its mapping alive and is never
    /// written: the mapping is read-only.
    private let owner: AnyObject?

    /// A zeroed buffer: what every page built in memory starts from, so unused bytes (which the
    /// checksum covers) are always zero.
    package init(pageSize: Int) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        owner = nil
    }

    /// A buffer that the caller fills completely before anything reads it (a page read from the
    /// file, or a copy of another page), so zeroing it first would be wasted work.
    package init(uninitializedPageSize pageSize: Int) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        owner = nil
    }

    /// A read-only view of bytes that `owner` keeps alive (a page in a memory map).
    init(viewing bytes: UnsafeMutableRawBufferPointer, keeping owner: AnyObject) {
        self.bytes = bytes
        self.owner = owner
    }

    deinit { if owner == nil { bytes.deallocate() } }

    package var pageSize: Int { bytes.count }
    package var readOnly: UnsafeRawBufferPointer { UnsafeRawBufferPointer(bytes) }

    package var kindByte: UInt8 { bytes.loadLittleEndian(at: PageHeader.kindOffset) }
    package var entryCount: Int { Int(bytes.loadLittleEndian(at: PageHeader.countOffset, as: UInt16.self)) }
    package var pageID: PageID { PageID(bytes.loadLittleEndian(at: PageHeader.pageIDOffset, as: UInt64.self)) }
    package var birth: TransactionID { TransactionID(bytes.loadLittleEndian(at: PageHeader.birthOffset, as: UInt64.self)) }
    package var reference: PageReference { PageReference(page: pageID, birth: birth) }

    /// Writes the header fields and the checksum. Call once the body is complete.
    package func seal(kind: PageKind, page: PageID, birth: TransactionID, count: Int = 0) {
        precondition(count <= Int(UInt16.max), "entry count overflows the page header")
        bytes.storeLittleEndian(kind.rawValue, at: PageHeader.kindOffset)
        bytes.storeLittleEndian(UInt8(0), at: PageHeader.flagsOffset)
        bytes.storeLittleEndian(UInt16(count), at: PageHeader.countOffset)
        bytes.storeLittleEndian(page.rawValue, at: PageHeader.pageIDOffset)
        bytes.storeLittleEndian(birth.rawValue, at: PageHeader.birthOffset)
        bytes.storeLittleEndian(computeChecksum(), at: PageHeader.checksumOffset)
    }

    private func computeChecksum() -> UInt32 {
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: readOnly[PageHeader.kindOffset...]))
    }

    /// Checks the checksum, the page's claimed id, its kind, and (when given) its birth.
    /// - Throws: a damage ``StoreError`` naming `page`.
    package func verify(page: PageID, kind: PageKind?, birth expectedBirth: TransactionID?) throws {
        let stored: UInt32 = bytes.loadLittleEndian(at: PageHeader.checksumOffset)
        guard stored == computeChecksum() else { throw StoreError.pageChecksumMismatch(page: page) }
        guard pageID == page else { throw StoreError.pageIdentityMismatch(page: page, found: pageID) }
        if let kind, kindByte != kind.rawValue {
            throw StoreError.pageKindMismatch(page: page, expected: kind, found: kindByte)
        }
        if let expectedBirth, birth != expectedBirth {
            throw StoreError.pageBirthMismatch(page: page, expected: expectedBirth, found: birth)
        }
    }
}
