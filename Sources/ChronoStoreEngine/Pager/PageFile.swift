// Reading verified pages from the data file through the cache, and writing sealed pages in runs.

/// Page-level access to a store's data file.
///
/// `@unchecked Sendable`: it holds only immutable configuration and two thread-safe objects.
package final class PageFile: @unchecked Sendable {
    package let file: any StoreFile
    package let pageSize: Int
    package let cache: PageCache
    /// Old page versions rebuilt from packed history, by (page, birth). As large as the page
    /// cache's budget and at least 4,096 pages: rebuilding a cold page applies up to a chain of
    /// deltas, so readers of old roots of a large store (100,000 records: 7,000 leaves) must not
    /// evict each other's pages (filled only by such readers).
    package let rebuiltCache: PageCache
    /// Pages of registered group-commit members not written yet, read as if they were.
    let staged = StagedPages()
    private let sizeLock = Lock()
    /// A length the file is known to have reached (guarded by `sizeLock`).
    private var knownByteCount: UInt64 = 0
    /// The file mapped for reading, when reads go through a memory map (guarded by `sizeLock`;
    /// replaced by a larger mapping when the file outgrows it).
    private var mappedPages: MappedPages?
    /// The file to map: nil when reads use `pread` (other kinds of file, or maps turned off).
    private let mappableFile: PosixFile?

    /// - Parameter mapsFile: read committed pages through a read-only memory map of the file
    ///   instead of `pread` into a cached copy (only for a ``PosixFile``; see ``read(_:kind:pageCount:cached:)``).
    package init(file: any StoreFile, pageSize: Int, cache: PageCache, mapsFile: Bool = false) {
        self.file = file
        self.pageSize = pageSize
        self.cache = cache
        rebuiltCache = PageCache(pageCapacity: max(4096, cache.pageCapacity))
        mappableFile = mapsFile ? file as? PosixFile : nil
    }

    /// The page at `reference`, verified: checksum, page id, kind (when given) and birth.
    /// Leaf and branch pages are also checked structurally before they are cached.
    /// - Parameters:
    ///   - pageCount: the allocation mark of the state being read; later pages cannot be reached.
    ///   - cached: whether to keep the page in the cache (large-value pages are not kept).
    /// - Throws: a damage ``StoreError`` naming the page, or ``StoreError/io(_:)``.
    ///
    /// With a memory map, a cached read returns a view of the page in the map instead: no
    /// `pread`, no copy, and the checks above run only the first time a page version is read
    /// through that mapping. Uncached reads (large values, pages a transaction spilled,
    /// recovery's checks) always copy and check.
    package func read(_ reference: PageReference, kind: PageKind?, pageCount: UInt64, cached: Bool = true) throws -> PageBuffer {
        var window: MappedWindow?
        return try read(reference, kind: kind, pageCount: pageCount, cached: cached, window: &window)
    }

    /// ``read(_:kind:pageCount:cached:)`` for a caller that keeps the part of the memory map it
    /// last read through (`window`, nil at first): pages inside it are read without taking the
    /// size lock, which every reader thread would otherwise share. Keep a window only while the
    /// pages read are ones a pinned root reaches (a transaction's reader): the window does not
    /// shrink when a compaction cuts the file, and compaction cuts only pages no pin reaches.
    ///
    /// With `privateCopy`, the page is never a view into the memory map: it comes from the page
    /// cache, or is read with `pread`, verified and kept there (for a version whose slot a commit
    /// may rewrite later, read while its root is pinned: see `SnapshotReader.read`).
    func read(
        _ reference: PageReference, kind: PageKind?, pageCount: UInt64, cached: Bool, privateCopy: Bool = false,
        window: inout MappedWindow?
    ) throws -> PageBuffer {
        // Built and sealed by this process: only the kind needs checking.
        if let page = staged.page(reference.page) {
            if page.birth == reference.birth {
                if let kind, page.kindByte != kind.rawValue {
                    throw StoreError.pageKindMismatch(page: reference.page, expected: kind, found: page.kindByte)
                }
                return page
            }
            // A newer birth at that number: the slot was free in the newest state and a commit of
            // this process reuses it, so its group's leader may be writing it right now. The older
            // version asked for (a packed one: the caller rebuilds it from its pack) must not be
            // read from the slot: a view of it would change under the reader. An older staged birth
            // is a stale stage (a failed commit's, until the next writer clears it), which must
            // never hide a page: the slot is read as before.
            if page.birth > reference.birth {
                throw StoreError.pageBirthMismatch(page: reference.page, expected: reference.birth, found: page.birth)
            }
        }
        if cached, !privateCopy, mappableFile != nil,
            let page = try mappedPage(reference, kind: kind, pageCount: pageCount, window: &window)
        {
            return page
        }
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

    /// The page at `reference` as a view into the memory map, verified the first time this
    /// mapping shows that version; nil when the page lies past the end of the file as this
    /// process knows it, or the file cannot be mapped (the caller then reads it with `pread`).
    private func mappedPage(
        _ reference: PageReference, kind: PageKind?, pageCount: UInt64, window: inout MappedWindow?
    ) throws -> PageBuffer? {
        let page = reference.page
        guard page.rawValue >= 1, page.rawValue < pageCount else {
            throw StoreError.pageOutOfRange(page: page, pageCount: pageCount)
        }
        if window.map({ page.rawValue >= $0.pageLimit }) ?? true {
            window = mapping(covering: page)
        }
        guard let pages = window?.pages else { return nil }
        let view = pages.view(of: page)
        // A slot reused since it was verified holds another birth (or, read through a bad
        // reference, another page id): check the header before trusting the record.
        if !pages.isVerified(page, birth: reference.birth) || view.birth != reference.birth || view.pageID != page {
            try view.verify(page: page, kind: nil, birth: reference.birth)
            if view.kindByte == PageKind.leaf.rawValue || view.kindByte == PageKind.branch.rawValue {
                try NodeLayout.validate(view, kind: view.kindByte == PageKind.leaf.rawValue ? .leaf : .branch)
            }
            pages.markVerified(page, birth: reference.birth)
        }
        if let kind, view.kindByte != kind.rawValue {
            throw StoreError.pageKindMismatch(page: page, expected: kind, found: view.kindByte)
        }
        return view
    }

    /// The mapping to read `page` through, once the page is known to lie inside the file: bytes
    /// past the file's end must never be touched through a map (`SIGBUS`). The known length only
    /// errs low: it grows with ``extend(toPageCount:)`` and a fresh `fstat`, and is forgotten
    /// when this or another process may have cut the file (compaction cuts only free pages,
    /// which no reader's references reach).
    private func mapping(covering page: PageID) -> MappedWindow? {
        guard let mappableFile else { return nil }
        let (end, overflows) = (page.rawValue + 1).multipliedReportingOverflow(by: UInt64(pageSize))
        guard !overflows else { return nil }
        return sizeLock.withLock {
            if end > knownByteCount {
                guard let size = try? file.byteCount() else { return nil }
                knownByteCount = size
                guard end <= size else { return nil }
            }
            let knownPages = knownByteCount / UInt64(pageSize)
            if let mappedPages, page.rawValue < mappedPages.pageCapacity {
                return MappedWindow(pages: mappedPages, pageLimit: min(knownPages, mappedPages.pageCapacity))
            }
            // Map twice what the file holds (at least 64 MiB), so growth rarely needs a new
            // mapping; views of the old one keep it alive until they are released.
            let reservation = max(knownByteCount * 2, 64 << 20)
            let rounded = (reservation + UInt64(pageSize) - 1) / UInt64(pageSize) * UInt64(pageSize)
            guard rounded <= UInt64(Int.max),
                let fresh = MappedPages(file: mappableFile, pageSize: pageSize, byteCount: Int(rounded))
            else { return nil }
            mappedPages = fresh
            return MappedWindow(pages: fresh, pageLimit: min(knownPages, fresh.pageCapacity))
        }
    }

    /// A mapping and how many of its pages were known to lie inside the file when it was handed
    /// out; see ``read(_:kind:pageCount:cached:window:)``.
    struct MappedWindow {
        let pages: MappedPages
        let pageLimit: UInt64
    }

    /// How many bytes the current memory map covers (nil when reads do not go through one).
    var mappedByteCount: Int? { sizeLock.withLock { mappedPages?.mapping.byteCount } }

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

    /// Whether page `page` holds only zero bytes as this process sees the file (written bytes
    /// included, synced or not), read through the memory map, or with `pread` when reads do
    /// not go through one. False when it cannot be read (the caller then writes the zeros).
    package func holdsOnlyZeros(_ page: PageID, pageCount: UInt64) -> Bool {
        let buffer: PageBuffer
        if page.rawValue >= 1, page.rawValue < pageCount, let window = mapping(covering: page), page.rawValue < window.pageLimit {
            buffer = window.pages.view(of: page)
        } else if let read = try? readUncached(page, pageCount: pageCount) {
            buffer = read
        } else {
            return false
        }
        return withExtendedLifetime(buffer) {
            let bytes = buffer.readOnly
            var offset = 0
            while offset + 8 <= bytes.count {
                if bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != 0 { return false }
                offset += 8
            }
            return true
        }
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

    /// Writes the staged pages of the commits up to `transaction` (a group's members) that the
    /// group's end still reaches, then forgets them all (see ``StagedPages``).
    func writeStaged(through transaction: TransactionID) throws {
        let (live, dead) = staged.pages(bornThrough: transaction)
        try write(live)
        staged.forget(live + dead)
    }

    /// The most bytes one `pwrite` of neighbouring pages carries (at least one page). On Linux
    /// 6.18's ext4 a buffered write puts its bytes in page-cache folios as large as the write, and
    /// every later 4 KiB write into a large folio costs more the larger it is, its sync too: a
    /// single put's writes took 125–137 µs on a file written in 1 MiB writes, 44–48 µs in 256 KiB
    /// writes, 20–26 µs in 64 KiB writes and 13–16 µs in 16 KiB writes, its commit 453–496 µs
    /// against 230–333 µs. With 16 KiB writes a 1M-record bulk load took 5.64 against 3.69 s
    /// (presumably more folios to write back), so the cap is 64 KiB (Docs/Performance.md, "Page
    /// cache folios"). Neighbouring pages written by separate calls still reach the device as one
    /// request: writeback merges them.
    static let largestWrite = 64 * 1024

    /// Neighbouring pages one `pwrite` carries at most (see ``largestWrite``).
    var pagesPerWrite: Int { max(1, Self.largestWrite / pageSize) }

    /// Writes sealed pages, coalescing neighbours into one `pwrite` per run of at most
    /// ``largestWrite`` bytes.
    package func write(_ pages: [PageBuffer]) throws {
        // Sorted by page number read once per page: a comparison that reads each page's header
        // through the class costs retains and loads per step, a fifth of a small commit's sort.
        let sorted = pages.indices.map { (page: pages[$0].pageID.rawValue, index: $0) }
            .sorted { $0.page < $1.page }
            .map { pages[$0.index] }
        var runStart = 0
        while runStart < sorted.count {
            var runEnd = runStart + 1
            while runEnd < sorted.count, runEnd - runStart < pagesPerWrite,
                sorted[runEnd].pageID.rawValue == sorted[runEnd - 1].pageID.rawValue + 1
            {
                runEnd += 1
            }
            try writeRun(sorted[runStart..<runEnd])
            runStart = runEnd
        }
        // The mapping shows exactly these bytes now, and this process built and sealed them:
        // reading them back through it need not verify them again.
        guard let mapped = sizeLock.withLock({ mappedPages }) else { return }
        for page in sorted where page.pageID.rawValue < mapped.pageCapacity {
            mapped.markVerified(page.pageID, birth: page.birth)
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
