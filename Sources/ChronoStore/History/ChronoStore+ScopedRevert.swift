// Scoped revert: one datastore range back to an older root, committed as a forward edit.
import ChronoStoreEngine

extension ChronoStore {
    /// Commits, as one new root, the records of `format`'s datastore whose identifiers lie in
    /// `bounds` as they were at `root`, with their index entries; every other record (of this
    /// datastore or any other) stays as it is now.
    ///
    /// Records in the range that exist now but did not at `root` are deleted; records that
    /// existed then are put back with their bytes of then (older versions migrate on load as
    /// usual). This is per-document undo, or "restore this one note from last Tuesday", as a
    /// forward edit: it is itself undoable, and it never moves the head back. Inside a
    /// transaction it joins it. Observers hear about the records that changed.
    ///
    /// ```swift
    /// // Undo the last move of game 7 only: its moves are identified by (game, move number).
    /// try await store.revert(MoveFormat.self, in: KeyBounds(KeyTuple2(7, 0)...KeyTuple2(7, .max)), to: beforeLastMove)
    /// ```
    /// Cost: O((a + b) log n) for a records in the range now and b then, plus decoding the ones
    /// that differ (for index maintenance).
    /// - Returns: how many records changed (with none, nothing is committed).
    /// - Throws: ``ChronoStoreError/rootNotRetained(_:)``, ``ChronoStoreError/snapshotNotFound(_:)``,
    ///   ``ChronoStoreError/noRootAtOrBefore(millisecondsSince1970:)``, or
    ///   ``ChronoStoreError/uniqueIndexViolation(datastore:index:existing:conflicting:)`` when a
    ///   restored record's unique value now belongs to a record outside the range (nothing changes).
    @discardableResult
    public func revert<Format: DatastoreFormat>(
        _ format: Format.Type, in bounds: KeyBounds<Format.Identifier> = .all, to root: RootSelection, label: String? = nil
    ) async throws -> Int {
        try Format.validateName()
        let range = bounds.keyRange(suffixed: false)
        let then = try engineCall {
            let reader = try engine.beginRead(at: root.engineValue)
            defer { reader.close() }
            return try Self.records(of: Format.self, in: range, reader)
        }
        return try await performWrite(label: label) { writer, log in
            let now = try Self.records(of: Format.self, in: range, writer)
            let changed = Set(now.keys).union(then.keys).filter { now[$0] != then[$0] }
                .sorted { $0.lexicographicallyPrecedes($1) }
            if changed.isEmpty { return 0 }
            let built = try Format.prepareIndexes(in: writer, log: &log)
            // Every old entry goes before any new one is added, so records of the range that
            // trade unique values between them do not conflict with each other.
            for key in changed where !built.isEmpty {
                try Format.updateIndexes(built, key: key, old: try now[key].map(Format.decodeRecord), new: nil, in: writer)
            }
            for key in changed {
                let restored = then[key]
                if !built.isEmpty {
                    try Format.updateIndexes(built, key: key, old: nil, new: try restored.map(Format.decodeRecord), in: writer)
                }
                if let restored { try writer.put(key, restored, in: Format.collectionName) }
                else { try writer.delete(key, in: Format.collectionName) }
                log.record(collection: Format.collectionName, key: key, old: now[key], new: restored)
            }
            return changed.count
        }
    }

    /// Reverts `format`'s records in `bounds` to their state at the retained root `root`.
    @discardableResult
    public func revert<Format: DatastoreFormat>(
        _ format: Format.Type, in bounds: KeyBounds<Format.Identifier> = .all, to root: RootID, label: String? = nil
    ) async throws -> Int {
        try await revert(format, in: bounds, to: .root(root), label: label)
    }

    /// The stored records of `Format` in `range`, by key.
    private static func records<Format: DatastoreFormat>(
        of format: Format.Type, in range: KeyRange, _ reader: any CollectionReading
    ) throws -> [[UInt8]: [UInt8]] {
        var records: [[UInt8]: [UInt8]] = [:]
        try reader.scan(Format.collectionName, range: range, reverse: false) { key, value in
            records[key] = value
            return true
        }
        return records
    }
}

extension Datastore {
    /// Puts this datastore's records in `bounds` back as they were at `root`, as one new root:
    /// see `ChronoStore.revert(_:in:to:label:)`.
    @discardableResult
    public func revert(in bounds: KeyBounds<Format.Identifier> = .all, to root: RootSelection, label: String? = nil) async throws -> Int {
        try await store.revert(Format.self, in: bounds, to: root, label: label)
    }
}
