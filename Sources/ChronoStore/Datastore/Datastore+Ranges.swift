// Range loads over identifiers, streamed in either order.

extension Datastore {
    /// The records whose identifiers lie in `bounds`, in identifier order (or reversed), streamed
    /// in chunks (see ``RecordSequence``); at most `limit` of them (nil: all), for paging.
    ///
    /// ```swift
    /// for try await note in notes.load(KeyBounds(10..<20), order: .descending) { print(note.title) }
    /// let page = try await notes.load(KeyBounds(from: .excluding(lastSeen)), limit: 50).collect()
    /// ```
    public func load(
        _ bounds: KeyBounds<Format.Identifier>, order: RangeOrder = .ascending, limit: Int? = nil
    ) -> RecordSequence<Format> {
        RecordSequence(store: store, source: .records(bounds.keyRange(suffixed: false)), order: order, limit: limit)
    }

    /// Every record, in identifier order (or reversed), streamed in chunks; at most `limit`.
    public func loadAll(order: RangeOrder = .ascending, limit: Int? = nil) -> RecordSequence<Format> {
        load(KeyBounds.all, order: order, limit: limit)
    }
}
