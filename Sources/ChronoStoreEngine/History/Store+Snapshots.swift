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
            if try tree.lookup(key, reader: transaction) != nil { throw StoreError.snapshotExists(name) }
            var records = 0
            for collection in try transaction.collectionNames() { records += try transaction.count(in: collection) }
            let info = SnapshotInfo(
                name: name, root: transaction.base.head.transaction, timeMilliseconds: Clock.nowMilliseconds(),
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
            guard try tree.lookup(key, reader: transaction) != nil else { throw StoreError.snapshotNotFound(name) }
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
        guard let info = try snapshots().first(where: { $0.name == name }) else { throw StoreError.snapshotNotFound(name) }
        return try revert(to: info.root, label: label ?? "Check out \(name)")
    }
}
