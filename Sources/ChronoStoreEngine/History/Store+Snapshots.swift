// Snapshots: named, pinned roots that survive every retention policy until deleted.

/// A snapshot as the store lists it.
package struct SnapshotInfo: Equatable, Sendable {
    package var name: String
    package var root: TransactionID
    /// When the snapshot was taken, in milliseconds since 1970.
    package var timeMilliseconds: Int64
    /// Entries in all collections of the snapshot's root.
    package var recordCount: Int
}

/// The snapshot tree maps a name (UTF-8, 1–255 bytes) to a 24-byte value:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | root id |
/// | 8 | 8 | time taken, milliseconds since 1970 |
/// | 16 | 8 | record count of that root |
enum SnapshotTree {
    static func encode(_ info: SnapshotInfo) -> LeafValue {
        var bytes = [UInt8](repeating: 0, count: 24)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeLittleEndian(info.root.rawValue, at: 0)
            raw.storeLittleEndian(info.timeMilliseconds, at: 8)
            raw.storeLittleEndian(UInt64(info.recordCount), at: 16)
        }
        return .inline(bytes)
    }

    static func decode(name: UnsafeRawBufferPointer, _ value: LeafValue, page: PageID) throws -> SnapshotInfo {
        guard case .inline(let bytes) = value, bytes.count == 24 else {
            throw StoreError.malformedPage(page: page, reason: "snapshot entry has the wrong size")
        }
        return bytes.withUnsafeBytes { raw in
            SnapshotInfo(
                name: String(decoding: name, as: UTF8.self), root: TransactionID(raw.loadLittleEndian(at: 0, as: UInt64.self)),
                timeMilliseconds: raw.loadLittleEndian(at: 8),
                recordCount: Int(clamping: raw.loadLittleEndian(at: 16, as: UInt64.self)))
        }
    }

    /// Every snapshot in a snapshot tree, by name.
    static func all(_ root: PageReference, reader: some TreeReading) throws -> [SnapshotInfo] {
        var result: [SnapshotInfo] = []
        let tree = BTree(root: root, owner: .system)
        try tree.scan(.all, reverse: false, reader: reader) { name, value in
            result.append(try decode(name: name, value, page: root.page))
            return true
        }
        return result
    }

    /// The snapshot named `name`, if any. O(log snapshots).
    static func find(_ name: String, in root: PageReference, reader: some TreeReading) throws -> SnapshotInfo? {
        let key = Array(name.utf8)
        guard !key.isEmpty, let value = try BTree(root: root, owner: .system).lookup(key, reader: reader) else { return nil }
        return try key.withUnsafeBytes { try decode(name: $0, value, page: root.page) }
    }

    static func validateName(_ name: String) throws -> [UInt8] {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { throw StoreError.invalidSnapshotName(name) }
        return bytes
    }
}

extension Store {
    /// Pins the head root under `name`. O(log snapshots); writes only the snapshot tree and a state.
    /// - Throws: ``StoreError/snapshotExists(_:)``, ``StoreError/invalidSnapshotName(_:)``.
    @discardableResult
    package func createSnapshot(named name: String) throws -> SnapshotInfo {
        let key = try SnapshotTree.validateName(name)
        let transaction = try beginWrite()
        do {
            let tree = BTree(root: transaction.base.state.snapshots, owner: .system)
            if try tree.contains(key, reader: transaction) { throw StoreError.snapshotExists(name) }
            var records = 0
            for collection in try transaction.collectionNames() { records += try transaction.count(in: collection) }
            let info = SnapshotInfo(
                name: name, root: transaction.base.head.transaction, timeMilliseconds: options.clock.nowMilliseconds(),
                recordCount: records)
            transaction.history.snapshotEdits.append((key, info))
            transaction.history.forceState = true
            try transaction.commit()
            return info
        } catch {
            transaction.abort()
            throw error
        }
    }

    /// The snapshots, sorted by name.
    package func snapshots() throws -> [SnapshotInfo] {
        let reader = try beginRead()
        defer { reader.close() }
        return try SnapshotTree.all(reader.snapshot.state.snapshots, reader: reader.treeReader)
    }

    /// Deletes a snapshot; its root becomes subject to retention again.
    /// - Throws: ``StoreError/snapshotNotFound(_:)``.
    package func deleteSnapshot(named name: String) throws {
        let key = try SnapshotTree.validateName(name)
        let transaction = try beginWrite()
        do {
            let tree = BTree(root: transaction.base.state.snapshots, owner: .system)
            guard try tree.contains(key, reader: transaction) else { throw StoreError.snapshotNotFound(name) }
            transaction.history.snapshotEdits.append((key, nil))
            transaction.history.forceState = true
            try transaction.commit()
        } catch {
            transaction.abort()
            throw error
        }
    }

    /// Makes the snapshot's contents the head as a new commit (a revert), so later writes branch
    /// from it and undo returns to where the head was. O(1) in store size.
    /// - Returns: the new head.
    @discardableResult
    package func checkoutSnapshot(named name: String, label: String? = nil) throws -> TransactionID {
        let reader = try beginRead()
        let found = try SnapshotTree.find(name, in: reader.snapshot.state.snapshots, reader: reader.treeReader)
        reader.close()
        guard let info = found else { throw StoreError.snapshotNotFound(name) }
        return try revert(to: info.root, label: label ?? "Check out \(name)")
    }
}

extension WriteTransaction {
    /// Applies this transaction's snapshot edits and pins every snapshot's root against pruning.
    /// O(1) when no snapshot changes and the store has seen this snapshot tree before, plus
    /// O(log snapshots) per edit; a deleted snapshot's root is looked at again by pruning.
    func applySnapshotEdits() throws -> BTree {
        var snapshots = BTree(root: base.state.snapshots, owner: .system)
        var counts = try store.pruningMemory.snapshotCounts(for: snapshots.root, reader: self)
        for (name, info) in history.snapshotEdits {
            if let value = try snapshots.lookup(name, reader: self) {
                let previous = try name.withUnsafeBytes { try SnapshotTree.decode(name: $0, value, page: snapshots.root.page) }
                if let count = counts[previous.root], count > 1 { counts[previous.root] = count - 1 }
                else { counts.removeValue(forKey: previous.root) }
                rootsToRevisit.insert(previous.root)
            }
            if let info {
                _ = try snapshots.put(name, SnapshotTree.encode(info), editor: self)
                counts[info.root, default: 0] += 1
            } else {
                _ = try snapshots.remove(name, editor: self)
            }
        }
        allocator.pinnedRoots.snapshots = counts
        return snapshots
    }
}
