// The head timeline: which root was the head from when, so reads by date follow undo and redo.

/// The head timeline tree: one record per head change (a commit, an undo, a redo, a revert),
/// keyed by when it happened, naming the root that became the head.
///
/// Key (16 bytes): the change's time in milliseconds since 1970 (big-endian, times before 1970
/// clamped to 0), then the id of the transaction that made it (big-endian). Value (8 bytes,
/// little-endian): the root id that became the head. The head at time T is the root the newest
/// record at or before T names; the newest record always names the current head.
///
/// Records are dropped from the oldest end only (see ``trim(policy:isRetained:nowMilliseconds:reader:editor:)``),
/// so the timeline is one unbroken stretch of the head's past: a time it covers is answered by
/// the root that really was the head then, or, when that root is no longer retained, by an error
/// naming it; never by another root.
struct HeadTimeline {
    var tree: JournaledTree
    /// Records in the tree.
    var count: UInt64

    init(root: PageReference, count: UInt64, journal: TreeJournal) {
        tree = JournaledTree(root: root, journal: journal)
        self.count = count
    }

    /// The state's timeline.
    init(state: StateRecord) {
        self.init(root: state.headTimeline, count: state.headTimelineCount, journal: state.journal.headTimeline)
    }

    static func key(milliseconds: Int64, transaction: TransactionID) -> [UInt8] {
        IndexKey.pair(HistoryTrees.timeValue(milliseconds), transaction.rawValue)
    }

    static func value(_ root: TransactionID) -> LeafValue {
        .inline([UInt8](byteCount: 8) { $0.storeLittleEndian(root.rawValue, at: 0) })
    }

    static func root(of value: LeafValue, page: PageID) throws -> TransactionID {
        guard case .inline(let bytes) = value, bytes.count == 8 else {
            throw StoreError.malformedPage(page: page, reason: "head timeline record is malformed")
        }
        return TransactionID(bytes.withUnsafeBytes { $0.loadLittleEndian(at: 0, as: UInt64.self) })
    }

    /// The root the newest record at or before `milliseconds` names, or nil when the timeline
    /// starts later. O(log records).
    func head(atOrBefore milliseconds: Int64, reader: some TreeReading) throws -> TransactionID? {
        var found: TransactionID?
        let upper = KeyBound(IndexKey.pair(HistoryTrees.timeValue(milliseconds), UInt64.max), inclusive: true)
        try tree.scan(KeyRange(upper: upper), reverse: true, reader: reader) { key, value in
            found = try Self.root(of: value, page: tree.page(of: key))
            return false
        }
        return found
    }

    /// The newest record: its time and the root it names.
    func newest(reader: some TreeReading) throws -> (milliseconds: UInt64, root: TransactionID)? {
        try edge(reverse: true, reader: reader).map { ($0.milliseconds, $0.root) }
    }

    /// The oldest or newest record, with its key.
    func edge(reverse: Bool, reader: some TreeReading) throws -> (key: [UInt8], milliseconds: UInt64, root: TransactionID)? {
        var found: ([UInt8], UInt64, TransactionID)?
        try tree.scan(.all, reverse: reverse, reader: reader) { key, value in
            found = (Array(key), IndexKey.first(of: key), try Self.root(of: value, page: tree.page(of: key)))
            return false
        }
        return found
    }

    /// Records that `root` became the head at `milliseconds` in `transaction`. First lowers to
    /// that time every record stamped later (a clock that ran ahead, as ``HistoryTrees/lowerTimes(above:editor:)``
    /// does for commit times), so records stay in the order the changes happened. Adds nothing
    /// when the newest record already names `root`.
    mutating func record(
        _ root: TransactionID, at milliseconds: Int64, transaction: TransactionID, editor: some TreeEditing
    ) throws {
        if let newest = try newest(reader: editor) {
            // Records are in time order, so only a newest record stamped later needs lowering.
            if newest.milliseconds > HistoryTrees.timeValue(milliseconds) { try lowerTimes(above: milliseconds, editor: editor) }
            if newest.root == root { return }
        }
        if try tree.put(Self.key(milliseconds: milliseconds, transaction: transaction), Self.value(root), editor: editor) == nil {
            count += 1
        }
    }

    private mutating func lowerTimes(above milliseconds: Int64, editor: some TreeEditing) throws {
        var later: [([UInt8], LeafValue)] = []
        let lower = KeyBound(IndexKey.pair(HistoryTrees.timeValue(milliseconds), UInt64.max), inclusive: false)
        try tree.scan(KeyRange(lower: lower), reverse: false, reader: editor) { key, value in
            later.append((Array(key), value))
            return true
        }
        for (key, value) in later {
            let transaction = key.withUnsafeBytes { TransactionID(IndexKey.second(of: $0)) }
            _ = try tree.remove(key, editor: editor)
            _ = try tree.put(Self.key(milliseconds: milliseconds, transaction: transaction), value, editor: editor)
        }
    }

    /// Rewrites every record naming `old` to name `new` (a compaction root taking the head's
    /// place). O(records).
    mutating func rename(_ old: TransactionID, to new: TransactionID, editor: some TreeEditing) throws {
        var keys: [[UInt8]] = []
        try tree.scan(.all, reverse: false, reader: editor) { key, value in
            if try Self.root(of: value, page: tree.page(of: key)) == old { keys.append(Array(key)) }
            return true
        }
        for key in keys { _ = try tree.put(key, Self.value(new), editor: editor) }
    }

    /// Drops records from the oldest end while one is no longer needed; the newest record (the
    /// current head) always stays. A record goes when the root it names is no longer retained,
    /// when the policy is `lastRoots(N)` and more than 2N + 2 records are kept, or when the
    /// policy is `days(N)` and the next record began before the window. Amortized O(log records)
    /// per record ever added.
    mutating func trim(
        policy: RetentionPolicy, clear: Bool, nowMilliseconds: Int64, isRetained: (TransactionID) throws -> Bool,
        editor: some TreeEditing
    ) throws {
        if clear, count > 1, let newest = try edge(reverse: true, reader: editor) {
            try keepOnly(newest.key, root: newest.root, editor: editor)
            return
        }
        while count > 1, let oldest = try edge(reverse: false, reader: editor) {
            var drops = try clear || !isRetained(oldest.root)
            if !drops, case .lastRoots(let limit) = policy { drops = count > 2 * UInt64(limit) + 2 }
            if !drops, case .days(let days) = policy, let next = try second(after: oldest.key, reader: editor) {
                drops = Int64(clamping: next) < nowMilliseconds - Int64(days) * 86_400_000
            }
            guard drops else { return }
            _ = try tree.remove(oldest.key, editor: editor)
            count -= 1
        }
    }

    /// Replaces the tree by one holding only the record at `key`: O(pages), not O(records × log records).
    private mutating func keepOnly(_ key: [UInt8], root: TransactionID, editor: some TreeEditing) throws {
        var pages: [PageReference] = []
        try TreePages.forEach(in: tree.root, reader: editor) { page, _ in pages.append(page) }
        for page in pages { editor.releasePage(page, owner: .system) }
        tree.replace(root: try BTree.build(from: [(key, Self.value(root))], owner: .system, editor: editor))
        count = 1
    }

    /// The time of the record after `key`.
    private func second(after key: [UInt8], reader: some TreeReading) throws -> UInt64? {
        var found: UInt64?
        try tree.scan(KeyRange(lower: KeyBound(key, inclusive: false)), reverse: false, reader: reader) { next, _ in
            found = IndexKey.first(of: next)
            return false
        }
        return found
    }
}
