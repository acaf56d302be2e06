// Reading collections: shared by read transactions and by write transactions seeing their own edits.

/// Anything that can read one consistent version of the store's collections.
package protocol CollectionReading {
    /// The value under `key` in `collection`, or nil.
    func value(forKey key: [UInt8], in collection: String) throws -> [UInt8]?
    /// How many entries `collection` holds (0 when it does not exist). O(1).
    func count(in collection: String) throws -> Int
    /// Calls `body` with each entry of `collection` in `range`, in key order or reversed, until it
    /// returns false. Large values are read as they are reached; nothing else is buffered.
    func scan(
        _ collection: String, range: KeyRange, reverse: Bool, _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool
    ) throws
    /// The names of the collections that exist, sorted by their UTF-8 bytes.
    func collectionNames() throws -> [String]
}

/// The machinery behind ``CollectionReading``.
protocol CollectionReadingBase: CollectionReading {
    associatedtype Reader: TreeReading
    /// The pages this transaction sees: committed ones, and for a writer its own edits too.
    var collectionReader: Reader { get }
    var catalogTree: BTree { get }
    /// The entry for `name` as this transaction sees it (write transactions overlay their edits).
    func collectionEntry(_ name: [UInt8]) throws -> CollectionEntry?
    /// The entry for the collection called `collection`, validating the name; a read transaction
    /// remembers the last one it looked up.
    func collectionEntry(named collection: String) throws -> CollectionEntry?
}

extension CollectionReadingBase {
    func catalogEntry(_ name: [UInt8]) throws -> CollectionEntry? {
        guard let value = try catalogTree.lookup(name, reader: collectionReader) else { return nil }
        return try CollectionEntry.decode(value, page: catalogTree.root.page)
    }

    func collectionEntry(named collection: String) throws -> CollectionEntry? {
        try collectionEntry(CollectionEntry.validateName(collection))
    }

    func resolve(_ value: LeafValue) throws -> [UInt8] {
        switch value {
        case .inline(let bytes): return bytes
        case .overflow(let reference): return try Overflow.read(reference, reader: collectionReader)
        }
    }

    package func value(forKey key: [UInt8], in collection: String) throws -> [UInt8]? {
        guard let entry = try collectionEntry(named: collection), !key.isEmpty else { return nil }
        guard let value = try BTree(root: entry.root, owner: .history).lookup(key, reader: collectionReader) else { return nil }
        return try resolve(value)
    }

    package func count(in collection: String) throws -> Int {
        guard let entry = try collectionEntry(named: collection) else { return 0 }
        guard let count = Int(exactly: entry.count) else {
            throw StoreError.malformedPage(page: catalogTree.root.page, reason: "collection count \(entry.count) is impossible")
        }
        return count
    }

    package func scan(
        _ collection: String, range: KeyRange = .all, reverse: Bool = false,
        _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool
    ) throws {
        try scanEntries(collection, range: range, reverse: reverse, body)
    }

    /// What ``scan(_:range:reverse:_:)`` does; a write transaction wraps it (see `WriteTransaction.scan`).
    func scanEntries(
        _ collection: String, range: KeyRange, reverse: Bool, _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool
    ) throws {
        guard let entry = try collectionEntry(named: collection) else { return }
        try BTree(root: entry.root, owner: .history).scan(range, reverse: reverse, reader: collectionReader) { key, value in
            try body(Array(key), try resolve(value))
        }
    }

    package func collectionNames() throws -> [String] {
        var names: [String] = []
        try catalogTree.scan(.all, reverse: false, reader: collectionReader) { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return names
    }
}
