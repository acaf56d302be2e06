// Secure delete: freed pages are overwritten with zeros as soon as they could be reused.

/// With secure delete on (a store flag set at creation), a page that stops holding anything a
/// retained root, a reader or the durable state can reach is overwritten with zeros at the same
/// moment it becomes reusable: once the transaction that freed it is durable and no reader (in
/// any process) reads an older state. That is the earliest moment that is safe: before it, a
/// crash could bring back a state that still names the page, or a reader could still be reading
/// it. A store with secure delete makes every commit durable, so with no reader of an older
/// state open, the pages a commit frees are overwritten before it returns. The zeros reach the
/// disk with the next sync (the next commit's, `synchronize()` or `close()`): a second sync per
/// commit would double the cost of every commit, and the bookkeeping below never counts a page
/// as zeroed in a state that could be durable before the zeros are.
///
/// Bookkeeping: the state records the release transaction up to which every free-tree entry has
/// been zeroed (`zeroedThrough`, the value reached before this state was written); the store
/// remembers how far it got since. Entries released later are zeroed by the first commit that
/// finds them reusable. Pages a commit left over (under release 0) were reusable already and are
/// zeroed by that commit.
extension Store {
    /// After `transaction` published `snapshot` (writer still held): zeroes every free page that
    /// became reusable and was not zeroed yet. The next state records how far this got; it is
    /// written, and synced, after these writes.
    /// - Throws: an I/O error; the commit is published and durable all the same, and the pages
    ///   stay listed for the next commit to zero.
    func zeroReusablePages(after transaction: WriteTransaction, snapshot: StoreSnapshot) throws {
        guard snapshot.state.secureDelete else { return }
        let (horizon, start) = lock.withLock { (horizonLocked(oldestReadElsewhere()), zeroedThrough) }
        let from = max(start, snapshot.state.zeroedThrough)
        var pages = transaction.allocator.pool + transaction.allocator.recycled
        if horizon > from {
            let reader = SnapshotReader(pageFile: pageFile, pageCount: snapshot.state.pageCount)
            let tree = JournaledTree(root: snapshot.state.freeTree, journal: snapshot.state.journal.freeTree)
            let range = KeyRange(
                lower: KeyBound(FreeTree.key(release: TransactionID(from.rawValue + 1), sequence: 0), inclusive: true),
                upper: KeyBound(FreeTree.key(release: horizon, sequence: UInt64.max), inclusive: true))
            try tree.scan(range, reverse: false, reader: reader) { key, value in
                pages += try FreeTree.decode(value, page: tree.page(of: key))
                return true
            }
        }
        // Pages this handle's previous pass left zero may be skipped, while nobody else wrote
        // since: that pass ran right after this handle's previous commit, and this commit's
        // sync (before this pass) made its zeros durable. Another handle's commit in between
        // (whose zeros or sync this handle cannot vouch for) or a first pass trusts nothing.
        let trusted = lock.withLock { transaction.base.transaction == knownZeroAfter ? knownZeroPages : [] }
        let zeroed = try overwriteFreedPages(pages, pageCount: snapshot.state.pageCount, knownZero: trusted)
        lock.withLock {
            zeroedThrough = max(zeroedThrough, horizon, from)
            knownZeroPages = zeroed
            knownZeroAfter = snapshot.state.transaction
        }
    }

    /// The one place freed pages are overwritten: writes zeros over each page in `pages`, in runs
    /// of adjacent pages. Pages at or beyond `pageCount` (the file's allocation mark) are skipped,
    /// and so are pages of `knownZero` that still read as zeros: most of a commit's candidates are
    /// free pages it took and left over, which the previous pass zeroed, and a write (with its
    /// share of the next sync) costs far more than reading a page. Only pages this handle zeroed
    /// and synced qualify: after a failed sync the operating system's copy of a page may read as
    /// zeros while the disk still holds the old bytes. Returns the pages now zero.
    @discardableResult
    func overwriteFreedPages(_ pages: [PageID], pageCount: UInt64, knownZero: Set<PageID> = []) throws -> Set<PageID> {
        let candidates = Set(pages.filter { $0.rawValue > 0 && $0.rawValue < pageCount })
        let sorted = candidates.sorted()
            .filter { !knownZero.contains($0) || !pageFile.holdsOnlyZeros($0, pageCount: pageCount) }
        guard !sorted.isEmpty else { return candidates }
        // Zeros for the longest run written (at most 64 pages): most commits free scattered
        // pages, and clearing 256 KiB for each commit cost a tenth of a packing commit's work.
        let runLimit = 64
        var longest = 1
        var length = 1
        for index in sorted.indices.dropFirst() {
            length = sorted[index].rawValue == sorted[index - 1].rawValue + 1 ? min(length + 1, runLimit) : 1
            longest = max(longest, length)
        }
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: longest * pageSize, alignment: 16)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        var index = 0
        while index < sorted.count {
            var end = index + 1
            while end < sorted.count, end - index < longest, sorted[end].rawValue == sorted[end - 1].rawValue + 1 { end += 1 }
            let bytes = UnsafeRawBufferPointer(rebasing: zeros[0..<((end - index) * pageSize)])
            do {
                try pageFile.file.write(bytes, at: sorted[index].rawValue * UInt64(pageSize))
            } catch let error as IOError {
                throw StoreError.io(error)
            }
            index = end
        }
        return candidates
    }
}
