// Streaming range loads: an AsyncSequence that reads records in chunks from one pinned root.
import ChronoStoreEngine

/// The records in a range of identifiers or index values, streamed in order.
///
/// Iteration reads `chunkSize` entries at a time, so memory stays bounded however many records
/// match. All chunks come from one root: outside a transaction the iterator pins the head on its
/// first `next()` and keeps it until the end of the range (or until the iterator is discarded),
/// so concurrent commits never show up halfway through. Inside a transaction it reads through the
/// transaction (seeing its edits) and throws ``ChronoStoreError/transactionFinished`` if used after
/// the transaction ends.
///
/// Cost: O(log n) to find the start, then O(1) page reads per record on average, plus decoding.
public struct RecordSequence<Format: DatastoreFormat>: AsyncSequence, Sendable {
    /// Records of the format.
    public typealias Element = Format.Instance

    enum Source: Sendable {
        /// Records in a key range of the datastore's collection.
        case records(KeyRange)
        /// Records named by the entries of an index collection in a key range.
        case index(collection: String, KeyRange)
    }

    let store: ChronoStore
    let source: Source
    let order: RangeOrder
    /// How many entries one read step fetches.
    public var chunkSize = 128
    /// The most records the sequence yields (nil: every match). The pinned root is released
    /// as soon as the last one is read.
    public var limit: Int?

    /// The index a query needs built, checked at the first read.
    let requiredIndex: String?

    init(store: ChronoStore, source: Source, order: RangeOrder, limit: Int? = nil, requiredIndex: String? = nil) {
        self.store = store
        self.source = source
        self.order = order
        self.limit = limit
        self.requiredIndex = requiredIndex
    }

    /// The same sequence stopping after `count` records: a page.
    ///
    /// ```swift
    /// let newest = try await log.load(EntryFormat.date, in: .all, order: .descending).prefix(20).collect()
    /// ```
    public func prefix(_ count: Int) -> RecordSequence<Format> {
        var copy = self
        copy.limit = Swift.max(0, Swift.min(count, limit ?? count))
        return copy
    }

    /// An iterator bound to the current task's transaction on the store, if any.
    public func makeAsyncIterator() -> Iterator { Iterator(cursor: makeCursor()) }

    /// The same records, each as a `Result`: a record that fails to decode is a
    /// `.failure(.undecodableRecord(datastore:identifier:reason:))` naming it, in its place in
    /// the order, and the records after it still load. Iterating the sequence itself skips such
    /// records instead, so one bad record (say, JSON a tool wrote into the datastore) never
    /// fails a whole range; use this to find and report them.
    public func results() -> RecordResults<Format> { RecordResults(sequence: self) }

    func makeCursor() -> RecordCursor<Format> {
        RecordCursor(
            reader: RangeReader(store: store, context: TransactionContext.active(for: store)), source: source,
            reverse: order == .descending, chunkSize: Swift.max(chunkSize, 1), remaining: limit.map { Swift.max($0, 0) },
            requiredIndex: requiredIndex)
    }

    /// Loads every matching record into an array. Convenient for small results; it holds them
    /// all in memory. Records that fail to decode are skipped, as in iteration.
    public func collect() async throws -> [Format.Instance] {
        var result: [Format.Instance] = []
        for try await instance in self { result.append(instance) }
        return result
    }

    /// Reads a ``RecordSequence`` chunk by chunk, skipping records that fail to decode.
    public struct Iterator: AsyncIteratorProtocol {
        var cursor: RecordCursor<Format>

        /// The next record that decodes, reading the next chunk when the current one is used up.
        public mutating func next() async throws -> Format.Instance? {
            while let result = try cursor.next() {
                if case .success(let instance) = result { return instance }
            }
            return nil
        }
    }
}

/// The records of a ``RecordSequence`` as results: each record, or the typed error that names a
/// record that failed to decode. Get one with ``RecordSequence/results()``; its `limit` counts
/// only the records that decode.
public struct RecordResults<Format: DatastoreFormat>: AsyncSequence, Sendable {
    /// A record, or why it could not be decoded.
    public typealias Element = Result<Format.Instance, ChronoStoreError>
    let sequence: RecordSequence<Format>

    /// An iterator bound to the current task's transaction on the store, if any.
    public func makeAsyncIterator() -> Iterator { Iterator(cursor: sequence.makeCursor()) }

    /// Reads a ``RecordResults`` chunk by chunk.
    public struct Iterator: AsyncIteratorProtocol {
        var cursor: RecordCursor<Format>

        /// The next record or decoding failure.
        public mutating func next() async throws -> Result<Format.Instance, ChronoStoreError>? { try cursor.next() }
    }
}

/// The reading behind both sequences: chunks of decoded records (or decoding failures) from one
/// pinned root, resuming after the last key read.
struct RecordCursor<Format: DatastoreFormat> {
    let reader: RangeReader
    let source: RecordSequence<Format>.Source
    let reverse: Bool
    let chunkSize: Int
    private var requiredIndex: String?
    private var buffer: [Result<Format.Instance, ChronoStoreError>] = []
    private var position = 0
    private var resumeKey: [UInt8]?
    private var isExhausted = false
    /// How many more records may be yielded (nil: no limit).
    private var remaining: Int?

    init(
        reader: RangeReader, source: RecordSequence<Format>.Source, reverse: Bool, chunkSize: Int, remaining: Int?,
        requiredIndex: String?
    ) {
        self.remaining = remaining
        self.requiredIndex = requiredIndex
        self.reader = reader
        self.source = source
        self.reverse = reverse
        self.chunkSize = chunkSize
    }

    /// The next record or decoding failure; failures do not count against the limit.
    mutating func next() throws -> Result<Format.Instance, ChronoStoreError>? {
        if remaining == 0 {
            if !isExhausted {
                isExhausted = true
                reader.finish()
            }
            return nil
        }
        while position == buffer.count {
            if isExhausted { return nil }
            try refill()
        }
        defer { position += 1 }
        if case .success = buffer[position] { remaining = remaining.map { $0 - 1 } }
        return buffer[position]
    }

    private mutating func refill() throws {
        var range: KeyRange
        let indexCollection: String?
        switch source {
        case .records(let keys):
            range = keys
            indexCollection = nil
        case .index(let collection, let keys):
            range = keys
            indexCollection = collection
        }
        if let resumeKey {
            if reverse { range.upper = KeyBound(resumeKey, inclusive: false) }
            else { range.lower = KeyBound(resumeKey, inclusive: false) }
        }
        let limit = Swift.min(chunkSize, remaining ?? chunkSize)
        try checkRequiredIndex()
        let (results, lastKey, scanned) = try reader.read { collections in
            try Self.readChunk(from: collections, indexCollection: indexCollection, range: range, reverse: reverse, limit: limit)
        }
        buffer = results
        position = 0
        resumeKey = lastKey
        if scanned < limit {
            isExhausted = true
            reader.finish()
        }
    }

    private mutating func checkRequiredIndex() throws {
        guard let required = requiredIndex else { return }
        try reader.read { collections in
            guard try collections.count(in: Format.collectionName) == 0
                || Format.builtIndexes(in: collections).contains(where: { $0.name == required })
            else { throw ChronoStoreError.indexNotBuilt(datastore: Format.name, index: required) }
        }
        requiredIndex = nil
    }

    /// Up to `limit` entries of the range, decoded; returns them, the last key scanned and how
    /// many entries were scanned.
    private static func readChunk(
        from collections: any CollectionReading, indexCollection: String?, range: KeyRange, reverse: Bool, limit: Int
    ) throws -> ([Result<Format.Instance, ChronoStoreError>], [UInt8]?, Int) {
        var results: [Result<Format.Instance, ChronoStoreError>] = []
        var lastKey: [UInt8]?
        var scanned = 0
        try collections.scan(indexCollection ?? Format.collectionName, range: range, reverse: reverse) { key, value in
            scanned += 1
            lastKey = key
            if indexCollection != nil {
                if let record = try collections.value(forKey: value, in: Format.collectionName) {
                    results.append(decode(record, key: value))
                }
            } else {
                results.append(decode(value, key: key))
            }
            return scanned < limit
        }
        return (results, lastKey, scanned)
    }

    /// One record decoded, or the failure naming it.
    private static func decode(_ record: [UInt8], key: [UInt8]) -> Result<Format.Instance, ChronoStoreError> {
        do {
            return .success(try Format.decodeRecord(record, key: key))
        } catch let error as ChronoStoreError {
            if case .undecodableRecord = error { return .failure(error) }
            return .failure(.undecodableRecord(datastore: Format.name, identifier: Format.describe(key: key), reason: error.description))
        } catch {
            return .failure(.undecodableRecord(datastore: Format.name, identifier: Format.describe(key: key), reason: "\(error)"))
        }
    }
}

/// Where a range load reads: the task's transaction, or its own read transaction pinned on the
/// head at the first read and released at the end of the range or when the iterator goes away.
///
/// Not `Sendable`: an iterator is used by one task at a time.
final class RangeReader {
    private let store: ChronoStore
    private let context: TransactionContext?
    private var ownReader: ReadTransaction?

    init(store: ChronoStore, context: TransactionContext?) {
        self.store = store
        self.context = context
    }

    deinit { ownReader?.close() }

    /// Unpins the root once the range is read to its end.
    func finish() {
        ownReader?.close()
        ownReader = nil
    }

    func read<Result>(_ body: (any CollectionReading) throws -> Result) throws -> Result {
        if let context { return try engineCall { try context.read(body) } }
        return try engineCall {
            if ownReader == nil { ownReader = try store.engine.beginRead() }
            return try body(ownReader!)
        }
    }
}
