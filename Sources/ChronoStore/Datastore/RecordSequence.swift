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
    public func makeAsyncIterator() -> Iterator {
        Iterator(
            reader: RangeReader(store: store, context: TransactionContext.active(for: store)), source: source,
            reverse: order == .descending, chunkSize: Swift.max(chunkSize, 1), remaining: limit.map { Swift.max($0, 0) },
            requiredIndex: requiredIndex)
    }

    /// Loads every matching record into an array. Convenient for small results; it holds them
    /// all in memory.
    public func collect() async throws -> [Format.Instance] {
        var result: [Format.Instance] = []
        for try await instance in self { result.append(instance) }
        return result
    }

    /// Reads a ``RecordSequence`` chunk by chunk.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: RangeReader
        let source: Source
        let reverse: Bool
        let chunkSize: Int
        private var requiredIndex: String?
        private var buffer: [Format.Instance] = []
        private var position = 0
        private var resumeKey: [UInt8]?
        private var isExhausted = false
        /// How many more records may be yielded (nil: no limit).
        private var remaining: Int?

        init(reader: RangeReader, source: Source, reverse: Bool, chunkSize: Int, remaining: Int?, requiredIndex: String?) {
            self.remaining = remaining
            self.requiredIndex = requiredIndex
            self.reader = reader
            self.source = source
            self.reverse = reverse
            self.chunkSize = chunkSize
        }

        /// The next record, reading the next chunk when the current one is used up.
        public mutating func next() async throws -> Format.Instance? {
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
            remaining = remaining.map { $0 - 1 }
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
            let reverse = reverse
            if let required = requiredIndex {
                try reader.read { collections in
                    guard try collections.count(in: Format.collectionName) == 0
                        || Format.builtIndexes(in: collections).contains(where: { $0.name == required })
                    else { throw ChronoStoreError.indexNotBuilt(datastore: Format.name, index: required) }
                }
                requiredIndex = nil
            }
            let (instances, lastKey, scanned) = try reader.read { collections -> ([Format.Instance], [UInt8]?, Int) in
                var instances: [Format.Instance] = []
                var lastKey: [UInt8]?
                var scanned = 0
                try collections.scan(indexCollection ?? Format.collectionName, range: range, reverse: reverse) { key, value in
                    scanned += 1
                    lastKey = key
                    if indexCollection != nil {
                        if let record = try collections.value(forKey: value, in: Format.collectionName) {
                            instances.append(try Format.decodeRecord(record))
                        }
                    } else {
                        instances.append(try Format.decodeRecord(value))
                    }
                    return scanned < limit
                }
                return (instances, lastKey, scanned)
            }
            buffer = instances
            position = 0
            resumeKey = lastKey
            if scanned < limit {
                isExhausted = true
                reader.finish()
            }
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
