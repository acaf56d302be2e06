// Range loads over identifiers, streamed in either order.

extension Datastore {
    /// The records whose identifiers lie in `bounds`, in identifier order (or reversed), streamed
    /// in chunks (see ``RecordSequence``).
    ///
    /// ```swift
    /// for try await note in notes.load(KeyBounds(10..<20), order: .descending) { print(note.title) }
    /// ```
    public func load(_ bounds: KeyBounds<Format.Identifier>, order: RangeOrder = .ascending) -> RecordSequence<Format> {
        RecordSequence(store: store, source: .records(bounds.keyRange(suffixed: false)), order: order)
    }

    /// Every record, in identifier order (or reversed), streamed in chunks.
    public func loadAll(order: RangeOrder = .ascending) -> RecordSequence<Format> {
        load(KeyBounds.all, order: order)
    }
}
