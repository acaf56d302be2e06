// A history tree whose recent edits ride in the state page's journal until they are worth a page.

/// An engine tree (history, lineage or time index, head timeline, free tree) as its pages hold
/// it plus the edits the state journal holds back (format version 4). A commit that edits the
/// tree records the edit in the journal, which the state page carries anyway, instead of copying
/// a leaf and its branches; when the journal passes its share of the state page, the commit
/// applies it to the pages at once (``flush(editor:)``), and so does an edit that takes it past
/// ``inMemoryLimit``. Lookups and scans see the journal: the entries are the pages' entries with
/// each journaled key replaced or removed.
///
/// Every value of these trees is inline, so the journal holds bytes only.
struct JournaledTree {
    private(set) var base: BTree
    private(set) var journal: TreeJournal
    /// Edits go to the pages, not the journal (set once the journal was written out in a commit
    /// that keeps editing the tree).
    var writesThrough = false

    /// Journal bytes past which an edit writes the journal out at once and the transaction's
    /// further edits go to the pages: more than a state page holds (a commit would write it out
    /// anyway), and small enough that the merge in every lookup and scan stays cheap when one
    /// transaction edits many keys (dropping 100,000 head timeline records, say, one
    /// `edge` scan per record).
    static let inMemoryLimit = 16 << 10

    init(root: PageReference, journal: TreeJournal = TreeJournal()) {
        base = BTree(root: root, owner: .system)
        self.journal = journal
    }

    /// The root of the tree's pages (none when they hold nothing, whatever the journal holds).
    var root: PageReference { base.root }

    /// Whether the tree has no entries and never had pages: no pages and nothing journaled.
    var isAbsent: Bool { base.root.isNone && journal.isEmpty }

    /// The page that holds `key`'s entry, for errors: the state page when the journal holds it.
    func page(of key: [UInt8]) -> PageID {
        journal.record(for: key) != nil && journal.page != .none ? journal.page : base.root.page
    }

    func page(of key: UnsafeRawBufferPointer) -> PageID {
        journal.isEmpty ? base.root.page : page(of: Array(key))
    }

    func lookup(_ key: [UInt8], reader: some TreeReading) throws -> LeafValue? {
        if let record = journal.record(for: key) { return record.value.map { .inline($0) } }
        return try base.lookup(key, reader: reader)
    }

    /// Stores `value` under `key`. - Returns: the value it replaced, if any.
    @discardableResult
    mutating func put(_ key: [UInt8], _ value: LeafValue, editor: some TreeEditing) throws -> LeafValue? {
        let previous = try lookup(key, reader: editor)
        // A value that is not inline never occurs in these trees; the pages take it correctly.
        guard case .inline(let bytes) = value, !writesThrough else {
            try flush(editor: editor)
            _ = try base.put(key, value, editor: editor)
            return previous
        }
        journal.set(key, bytes)
        try writeOutIfLarge(editor: editor)
        return previous
    }

    private mutating func writeOutIfLarge(editor: some TreeEditing) throws {
        guard journal.encodedByteCount > Self.inMemoryLimit else { return }
        try flush(editor: editor)
        writesThrough = true
    }

    /// Removes `key`. - Returns: the removed value, if any.
    @discardableResult
    mutating func remove(_ key: [UInt8], editor: some TreeEditing) throws -> LeafValue? {
        if writesThrough {
            try flush(editor: editor)
            return try base.remove(key, editor: editor)
        }
        if let record = journal.record(for: key) {
            guard let value = record.value else { return nil }
            // Only a key the pages hold needs a removal record.
            if try base.contains(key, reader: editor) { journal.set(key, nil) } else { journal.forget(key) }
            try writeOutIfLarge(editor: editor)
            return .inline(value)
        }
        guard let value = try base.lookup(key, reader: editor) else { return nil }
        journal.set(key, nil)
        try writeOutIfLarge(editor: editor)
        return value
    }

    /// Calls `body` with each entry in `range`, in key order (descending when `reverse`), until
    /// it returns false: the pages' entries merged with the journal's. - Returns: false when
    /// `body` stopped the scan.
    @discardableResult
    func scan(
        _ range: KeyRange, reverse: Bool, reader: some TreeReading,
        _ body: (UnsafeRawBufferPointer, LeafValue) throws -> Bool
    ) throws -> Bool {
        if journal.isEmpty { return try base.scan(range, reverse: reverse, reader: reader, body) }
        // The records in `range`, found by binary search (they are sorted by key): positions
        // `first..<end` of the journal, taken from the low end, or from the high end when `reverse`.
        let records = journal.records
        let (first, end) = Self.bounds(of: range, in: records)
        var taken = 0
        func record(_ offset: Int) -> TreeJournal.Record { records[reverse ? end - 1 - offset : first + offset] }
        var stopped = false
        /// Hands `body` the journaled records that come before `key` in scan order (all of them
        /// when `key` is nil); false when `body` stopped.
        func emitRecords(before key: UnsafeRawBufferPointer?) throws -> Bool {
            while taken < end - first {
                let next = record(taken)
                if let key {
                    let order = next.key.withUnsafeBytes { KeyOrder.compare($0, key) }
                    if reverse ? order <= 0 : order >= 0 { return true }
                }
                taken += 1
                if let value = next.value, try !next.key.withUnsafeBytes({ try body($0, .inline(value)) }) { return false }
            }
            return true
        }
        try base.scan(range, reverse: reverse, reader: reader) { key, value in
            guard try emitRecords(before: key) else {
                stopped = true
                return false
            }
            if taken < end - first, record(taken).key.withUnsafeBytes({ KeyOrder.compare($0, key) }) == 0 {
                let record = record(taken)
                taken += 1
                guard let replacement = record.value else { return true }
                if try !body(key, .inline(replacement)) { stopped = true }
                return !stopped
            }
            if try !body(key, value) { stopped = true }
            return !stopped
        }
        if stopped { return false }
        return try emitRecords(before: nil)
    }

    /// The positions `first..<end` of the sorted `records` whose keys `range` admits. O(log n).
    private static func bounds(of range: KeyRange, in records: [TreeJournal.Record]) -> (first: Int, end: Int) {
        var first = 0
        if let lower = range.lower {
            // The first record above the bound, or at it when it is inclusive.
            first = KeyOrder.search(count: records.count) { index in
                let order = KeyOrder.compare(records[index].key, lower.key)
                return order == 0 && !lower.isInclusive ? -1 : order
            }.index
        }
        var end = records.count
        if let upper = range.upper {
            // The first record above the bound, or at it when it is exclusive.
            end = KeyOrder.search(count: records.count) { index in
                let order = KeyOrder.compare(records[index].key, upper.key)
                return order == 0 && upper.isInclusive ? -1 : order
            }.index
        }
        return (first, max(first, end))
    }

    /// Applies the journal to the pages (copying the leaves it touches) and empties it.
    mutating func flush(editor: some TreeEditing) throws {
        guard !journal.isEmpty else { return }
        for record in journal.records {
            if let value = record.value {
                _ = try base.put(record.key, .inline(value), editor: editor)
            } else {
                _ = try base.remove(record.key, editor: editor)
            }
        }
        journal.removeAll()
    }

    /// Makes `root` the tree's pages, which must hold every entry (a tree built from this
    /// one's entries): the journal is emptied. The caller released the old pages.
    mutating func replace(root: PageReference) {
        base.root = root
        journal.removeAll()
    }

    /// Makes `root` the tree's pages: a copy of the pages at ``root`` on other page numbers
    /// (compaction); the entries stay as they are. (Takes the moved root rather than a closure
    /// that moves it: moving allocates pages, which a caller whose allocator holds this tree
    /// must not do while the tree is being modified.)
    mutating func pagesMoved(to root: PageReference) {
        base.root = root
    }
}
