// Batched edits of the history indexes: a pass that drops most roots rebuilds them once.

/// Index edits a pass over many roots (`prune()`, `clearHistory()`) holds back: removing the
/// keys of 100,000 dropped roots one by one rewrites a path and rebalances leaves each time,
/// while rebuilding the few keys that remain costs one scan and one bulk build.
struct PendingIndexEdits {
    /// New values of history entries; nil for a removed root.
    var entries: [TransactionID: HistoryEntry?] = [:]
    /// Lineage links added, by lineage parent.
    var addedChildren: [TransactionID: Set<TransactionID>] = [:]
    /// Lineage keys (parent, child) removed.
    var removedLinks: Set<[UInt8]> = []
    /// Time index keys removed.
    var removedTimes: Set<[UInt8]> = []

    mutating func link(child: TransactionID, to parent: TransactionID) {
        removedLinks.remove(IndexKey.pair(parent.rawValue, child.rawValue))
        addedChildren[parent, default: []].insert(child)
    }

    mutating func unlink(child: TransactionID, from parent: TransactionID) {
        addedChildren[parent]?.remove(child)
        removedLinks.insert(IndexKey.pair(parent.rawValue, child.rawValue))
    }

    func isUnlinked(child: TransactionID, from parent: TransactionID) -> Bool {
        removedLinks.contains(IndexKey.pair(parent.rawValue, child.rawValue))
    }
}

extension HistoryTrees {
    /// From here on, edits are held back (lookups see them) until `applyBatch`.
    mutating func beginBatch() {
        pending = PendingIndexEdits()
    }

    /// Writes the held-back edits. A tree that loses or changes at least an eighth of its
    /// `keyCount` keys is rebuilt from the keys that remain (its old pages released): O(keys);
    /// a tree with fewer edits gets them one by one: O(edits × log keys).
    mutating func applyBatch(keyCount: UInt64, editor: some TreeEditing) throws {
        guard let edits = pending else { return }
        pending = nil
        let entryEdits = edits.entries.map { root, entry in (HistoryIndex.key(root), entry.map { $0.encoded() }) }
        try Self.apply(entryEdits, to: &entries, keyCount: keyCount, editor: editor)
        var linkEdits: [([UInt8], LeafValue?)] = edits.removedLinks.map { ($0, nil) }
        for (parent, children) in edits.addedChildren {
            linkEdits += children.map { (IndexKey.pair(parent.rawValue, $0.rawValue), LeafValue.inline([])) }
        }
        try Self.apply(linkEdits, to: &lineage, keyCount: keyCount, editor: editor)
        try Self.apply(edits.removedTimes.map { ($0, nil) }, to: &times, keyCount: keyCount, editor: editor)
    }

    /// Applies `edits` (nil removes the key) to `tree`.
    private static func apply(
        _ edits: [([UInt8], LeafValue?)], to tree: inout JournaledTree, keyCount: UInt64, editor: some TreeEditing
    ) throws {
        guard !edits.isEmpty else { return }
        if UInt64(edits.count) * 8 < keyCount {
            for (key, value) in edits.sorted(by: { KeyOrder.compare($0.0, $1.0) < 0 }) {
                if let value { _ = try tree.put(key, value, editor: editor) } else { _ = try tree.remove(key, editor: editor) }
            }
            return
        }
        var changes = Dictionary(edits, uniquingKeysWith: { _, last in last })
        var kept: [([UInt8], LeafValue)] = []
        try tree.scan(.all, reverse: false, reader: editor) { key, value in
            let bytes = Array(key)
            if let change = changes.removeValue(forKey: bytes) {
                if let change { kept.append((bytes, change)) }
            } else {
                kept.append((bytes, value))
            }
            return true
        }
        let added = changes.compactMap { key, value in value.map { (key, $0) } }
        if !added.isEmpty { kept = (kept + added).sorted { KeyOrder.compare($0.0, $1.0) < 0 } }
        var oldPages: [PageReference] = []
        try TreePages.forEach(in: tree.root, reader: editor) { page, _ in oldPages.append(page) }
        for page in oldPages { editor.releasePage(page, owner: .system) }
        tree.replace(root: try BTree.build(from: kept, owner: .system, editor: editor))
    }
}
