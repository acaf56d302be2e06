// Reading verified pages from the data file through the cache, and writing sealed pages in runs.

/// Page-level access to a store's data file.
///
/// `@unchecked Sendable`: it holds only immutable configuration and two thread-safe objects.
package final class PageFile: @unchecked Sendable {
    package let file: any StoreFile
    package let pageSize: Int
    package let cache: PageCache
    /// Old page versions rebuilt from packed history, by (page, birth).
    package let rebuiltCache = PageCache(pageCapacity: 4096)
    private let sizeLock = Lock()
    /// A length the file is known to have reached (guarded by `sizeLock`).
    private var knownByteCount: UInt64 = 0

    package init(file: any StoreFile, pageSize: Int, cache: PageCache) {
        self.file = file
        self.pageSize = pageSize
        self.cache = cache
    }

    /// The page at `reference`, verified: checksum, page id, kind (when given) and birth.
    /// Leaf and branch pages are also checked structurally before they are cached.
    /// - Parameters:
    ///   - pageCount: the allocation mark of the state being read; later pages cannot be reached.
    ///   - cached: whether to keep the page in the cache (large-value pages are not kept).
    /// - Throws: a damage ``StoreError`` naming the page, or ``StoreError/io(_:)``.
    package func read(_ reference: PageReference, kind: PageKind?, pageCount: UInt64, cached: Bool = true) throws -> PageBuffer {
        if let page = cache.page(reference) {
            if let kind, page.kindByte != kind.rawValue {
                throw StoreError.pageKindMismatch(page: reference.page, expected: kind, found: page.kindByte)
            }
            return page
        }
        let page = try readUncached(reference.page, pageCount: pageCount)
        try page.verify(page: reference.page, kind: kind, birth: reference.birth)
        if page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue {
            try NodeLayout.validate(page, kind: page.kindByte == PageKind.leaf.rawValue ? .leaf : .branch)
        }
        if cached { cache.insert(page) }
        return page
    }

    /// The raw bytes of page `page`, not verified.
    package func readUncached(_ page: PageID, pageCount: UInt64) throws -> PageBuffer {
        guard page.rawValue >= 1, page.rawValue < pageCount else {
            throw StoreError.pageOutOfRange(page: page, pageCount: pageCount)
        }
        let (offset, overflows) = page.rawValue.multipliedReportingOverflow(by: UInt64(pageSize))
        guard !overflows else { throw StoreError.pageOutOfRange(page: page, pageCount: pageCount) }
        let buffer = PageBuffer(uninitializedPageSize: pageSize)
        let complete: Bool
        do {
            complete = try file.readFully(into: buffer.bytes, at: offset)
        } catch let error as IOError {
            throw StoreError.io(error)
        }
        guard complete else { throw StoreError.pageOutOfRange(page: page, pageCount: pageCount) }
        return buffer
    }

    /// Grows the file to hold `pageCount` pages, so pages allocated but never written (and
    /// recorded as free) still lie inside it.
    package func extend(toPageCount pageCount: UInt64) throws {
        let (needed, overflows) = pageCount.multipliedReportingOverflow(by: UInt64(pageSize))
        // A mark this far out cannot be reached by any file system: report it as out of space.
        guard !overflows else { throw StoreError.io(IOError(operation: "extend", path: "store", code: Platform.noSpace)) }
        // Only ask the file system when the file might be shorter than needed.
        if sizeLock.withLock({ knownByteCount }) >= needed { return }
        do {
            let size = try file.byteCount()
            if size < needed { try file.truncate(to: needed) }
            sizeLock.withLock { knownByteCount = max(size, needed) }
        } catch let error as IOError {
            throw StoreError.io(error)
        }
    }

    /// Forgets the remembered file size (after the file was cut).
    package func forgetByteCount() {
        sizeLock.withLock { knownByteCount = 0 }
    }

    /// Writes sealed pages, coalescing neighbours into one `pwrite` per run.
    package func write(_ pages: [PageBuffer]) throws {
        let sorted = pages.sorted { $0.pageID < $1.pageID }
        var runStart = 0
        while runStart < sorted.count {
            var runEnd = runStart + 1
            while runEnd < sorted.count, runEnd - runStart < 256,
                sorted[runEnd].pageID.rawValue == sorted[runEnd - 1].pageID.rawValue + 1
            {
                runEnd += 1
            }
            try writeRun(sorted[runStart..<runEnd])
            runStart = runEnd
        }
    }

    private func writeRun(_ run: ArraySlice<PageBuffer>) throws {
        let offset = run.first!.pageID.rawValue * UInt64(pageSize)
        do {
            if run.count == 1 {
                try file.write(UnsafeRawBufferPointer(run.first!.bytes), at: offset)
                return
            }
            let joined = UnsafeMutableRawBufferPointer.allocate(byteCount: run.count * pageSize, alignment: 16)
            defer { joined.deallocate() }
            for (index, page) in run.enumerated() {
                (joined.baseAddress! + index * pageSize).copyMemory(from: page.bytes.baseAddress!, byteCount: pageSize)
            }
            try file.write(UnsafeRawBufferPointer(joined), at: offset)
        } catch let error as IOError {
            throw StoreError.io(error)
        }
    }
}
