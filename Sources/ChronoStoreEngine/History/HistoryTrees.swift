// The three history indexes a write transaction edits: entries, lineage links, commit times.

/// The history index (root id → entry), the lineage index ((lineage parent, child) → nothing)
/// and the time index ((commit time, root id) → nothing), as one write transaction edits them.
struct HistoryTrees {
    var entries: JournaledTree
    var lineage: JournaledTree
    var times: JournaledTree
    /// Edits held back while a pass drops many roots, applied at once by `applyBatch` (see
    /// `HistoryTrees+Batch.swift`); lookups see them.
    var pending: PendingIndexEdits?

    init(state: StateRecord) {
        entries = JournaledTree(root: state.historyIndex, journal: state.journal.historyIndex)
        lineage = JournaledTree(root: state.lineageIndex, journal: state.journal.lineageIndex)
        times = JournaledTree(root: state.timeIndex, journal: state.journal.timeIndex)
    }

    /// Bytes the three journals take in a state page.
    var journalByteCount: Int {
        entries.journal.encodedByteCount + lineage.journal.encodedByteCount + times.journal.encodedByteCount
    }

    /// Applies the three journals to the trees' pages.
    mutating func flushJournals(editor: some TreeEditing) throws {
        try entries.flush(editor: editor)
        try lineage.flush(editor: editor)
        try times.flush(editor: editor)
    }

    /// The state's journal fields for these trees.
    func record(into journal: inout StateJournal) {
        journal.historyIndex = entries.journal
        journal.lineageIndex = lineage.journal
        journal.timeIndex = times.journal
    }

    func entry(_ root: TransactionID, reader: some TreeReading) throws -> HistoryEntry? {
        if let pending, let edited = pending.entries[root] { return edited }
        let key = HistoryIndex.key(root)
        guard let value = try entries.lookup(key, reader: reader) else { return nil }
        return try HistoryEntry.decode(value, page: entries.page(of: key))
    }

    mutating func setEntry(_ entry: HistoryEntry, editor: some TreeEditing) throws {
        if pending != nil {
            pending?.entries[entry.root] = .some(entry)
            return
        }
        _ = try entries.put(HistoryIndex.key(entry.root), entry.encoded(), editor: editor)
    }

    /// Adds a new root's entry and its lineage and time links.
    mutating func insert(_ entry: HistoryEntry, editor: some TreeEditing) throws {
        precondition(pending == nil, "roots are not added during a batch")
        try setEntry(entry, editor: editor)
        if entry.lineageParent != .none {
            _ = try lineage.put(IndexKey.pair(entry.lineageParent.rawValue, entry.root.rawValue), .inline([]), editor: editor)
        }
        _ = try times.put(Self.timeKey(entry), .inline([]), editor: editor)
    }

    /// Removes a root's entry and its links (its children must have been re-linked first).
    mutating func remove(_ entry: HistoryEntry, editor: some TreeEditing) throws {
        if pending != nil {
            pending?.entries[entry.root] = .some(nil)
            if entry.lineageParent != .none { pending?.unlink(child: entry.root, from: entry.lineageParent) }
            pending?.removedTimes.insert(Self.timeKey(entry))
            return
        }
        _ = try entries.remove(HistoryIndex.key(entry.root), editor: editor)
        if entry.lineageParent != .none {
            _ = try lineage.remove(IndexKey.pair(entry.lineageParent.rawValue, entry.root.rawValue), editor: editor)
        }
        _ = try times.remove(Self.timeKey(entry), editor: editor)
    }

    mutating func relink(child: TransactionID, from oldParent: TransactionID, to newParent: TransactionID, editor: some TreeEditing) throws {
        if pending != nil {
            if oldParent != .none { pending?.unlink(child: child, from: oldParent) }
            if newParent != .none { pending?.link(child: child, to: newParent) }
            return
        }
        if oldParent != .none { _ = try lineage.remove(IndexKey.pair(oldParent.rawValue, child.rawValue), editor: editor) }
        if newParent != .none { _ = try lineage.put(IndexKey.pair(newParent.rawValue, child.rawValue), .inline([]), editor: editor) }
    }

    /// The retained roots whose lineage parent is `root`.
    func lineageChildren(of root: TransactionID, reader: some TreeReading) throws -> [TransactionID] {
        var children: [TransactionID] = []
        let range = KeyRange(
            lower: KeyBound(IndexKey.pair(root.rawValue, 0), inclusive: true),
            upper: KeyBound(IndexKey.pair(root.rawValue, UInt64.max), inclusive: true))
        try lineage.scan(range, reverse: false, reader: reader) { key, _ in
            let child = TransactionID(IndexKey.second(of: key))
            if pending?.isUnlinked(child: child, from: root) != true { children.append(child) }
            return true
        }
        if let added = pending?.addedChildren[root] { children = Array(Set(children).union(added)).sorted() }
        return children
    }

    /// The newest retained root committed at or before `milliseconds`.
    func newestRoot(atOrBefore milliseconds: Int64, reader: some TreeReading) throws -> TransactionID? {
        precondition(pending == nil, "the time index is read outside batches")
        var found: TransactionID?
        let range = KeyRange(upper: KeyBound(IndexKey.pair(Self.timeValue(milliseconds), UInt64.max), inclusive: true))
        try times.scan(range, reverse: true, reader: reader) { key, _ in
            found = TransactionID(IndexKey.second(of: key))
            return false
        }
        return found
    }

    /// Lowers to `milliseconds` the recorded time of every root stamped later: a root committed
    /// before another cannot have been committed after it, so a time past a newer commit's is a
    /// clock that had run ahead. Keeps recorded times in commit order. O(log roots) when no time
    /// is ahead, plus O(log roots) per root lowered (each root at most once per jump).
    mutating func lowerTimes(above milliseconds: Int64, editor: some TreeEditing) throws {
        precondition(pending == nil, "the time index is edited outside batches")
        var later: [TransactionID] = []
        let range = KeyRange(lower: KeyBound(IndexKey.pair(Self.timeValue(milliseconds), UInt64.max), inclusive: false))
        try times.scan(range, reverse: false, reader: editor) { key, _ in
            later.append(TransactionID(IndexKey.second(of: key)))
            return true
        }
        for id in later {
            guard var entry = try entry(id, reader: editor) else {
                throw StoreError.malformedPage(page: times.root.page, reason: "time index names a missing root \(id.rawValue)")
            }
            _ = try times.remove(Self.timeKey(entry), editor: editor)
            entry.timeMilliseconds = milliseconds
            _ = try times.put(Self.timeKey(entry), .inline([]), editor: editor)
            try setEntry(entry, editor: editor)
        }
    }

    static func timeKey(_ entry: HistoryEntry) -> [UInt8] {
        IndexKey.pair(timeValue(entry.timeMilliseconds), entry.root.rawValue)
    }

    /// Times before 1970 sort first (clamped to 0).
    static func timeValue(_ milliseconds: Int64) -> UInt64 { UInt64(max(milliseconds, 0)) }
}
