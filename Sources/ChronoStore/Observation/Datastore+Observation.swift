// Observing a datastore: an AsyncSequence of committed changes, for all records or one.

extension Datastore {
    /// The changes committed to this datastore from now on, in commit order.
    ///
    /// Delivered after each commit: this process's transactions (one element per record changed,
    /// coalesced within the transaction), undo, redo, revert, snapshot checkout and restore (the
    /// differences between the old and new head), and other processes' commits, noticed within
    /// about 100 ms. If the store moved several roots between deliveries, you receive the net
    /// differences. The stream ends when the store closes. A record that does not decode counts
    /// as absent: one that becomes undecodable is delivered as deleted, and one repaired as
    /// created, so a bad record never ends the stream. Elements are buffered without limit, so
    /// consume them promptly.
    ///
    /// Cost: O(changes) per local commit; O(records in the datastore) for a history operation or
    /// another process's commit (the engine has no structural diff yet).
    public func changes() -> AsyncThrowingStream<DatastoreChange<Format>, any Error> {
        observe(key: nil)
    }

    /// The changes committed to the record with `identifier` from now on (see ``changes()``).
    public func changes(for identifier: Format.Identifier) -> AsyncThrowingStream<DatastoreChange<Format>, any Error> {
        observe(key: Format.key(identifier))
    }

    private func observe(key: [UInt8]?) -> AsyncThrowingStream<DatastoreChange<Format>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DatastoreChange<Format>, any Error>.makeStream()
        let token = store.hub.add(
            collection: Format.collectionName,
            handler: { raw in
                if let key, raw.key != key { return }
                if let change = DatastoreChange<Format>(raw) { continuation.yield(change) }
            },
            finish: { continuation.finish() })
        guard let token else {
            continuation.finish()
            return stream
        }
        let hub = store.hub
        continuation.onTermination = { _ in hub.remove(token) }
        return stream
    }
}
