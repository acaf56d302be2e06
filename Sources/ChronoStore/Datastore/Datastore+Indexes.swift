// Queries through indexes: by exact value and by range, ordered by value then identifier.

extension Datastore {
    /// The records whose `index` value equals `value`, ordered by identifier (or reversed).
    /// For a unique index this yields at most one record.
    /// - Throws (when iterated): ``ChronoStoreError/indexNotBuilt(datastore:index:)`` if the index
    ///   was added after records were stored and ``warm(migrate:progress:)`` has not built it yet.
    public func load<Value>(
        _ index: DatastoreIndex<Format, Value>, equalTo value: Value, order: RangeOrder = .ascending, limit: Int? = nil
    ) -> RecordSequence<Format> {
        load(index, in: KeyBounds(from: .including(value), to: .including(value)), order: order, limit: limit)
    }

    /// The records whose `index` value lies in `bounds`, ordered by value, then identifier (or
    /// all reversed); at most `limit` of them (nil: all). A many-to-many index yields a record
    /// once per matching value.
    public func load<Value>(
        _ index: DatastoreIndex<Format, Value>, in bounds: KeyBounds<Value>, order: RangeOrder = .ascending,
        limit: Int? = nil
    ) -> RecordSequence<Format> {
        let erased = AnyDatastoreIndex(index)
        return RecordSequence(
            store: store,
            source: .index(collection: erased.collectionName, bounds.keyRange(suffixed: index.kind != .oneToOne)),
            order: order, limit: limit, requiredIndex: erased.name)
    }

    /// The record whose unique `index` value is `value`, or nil.
    public func first<Value>(_ index: DatastoreIndex<Format, Value>, equalTo value: Value) async throws -> Format.Instance? {
        var iterator = load(index, equalTo: value).makeAsyncIterator()
        return try await iterator.next()
    }
}
