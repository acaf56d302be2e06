// The actor that saves an app's state: debounced, off the main actor, with the last save undoable.
public import ChronoStore

/// Saves one state value under a key in a store, at most once per debounce interval, off the
/// main actor. Every save is a commit labelled "Save KEY"; ``undoLastSave()`` brings back the
/// value the last save replaced, as a new commit.
public actor StatePersister<State: Codable & Sendable & Equatable> {
    /// The store saved to.
    public let store: ChronoStore
    /// The key the state is saved under (see `ChronoStore.setValue(_:forKey:label:)`).
    public let key: String
    /// How long a change waits for more changes before it is saved.
    public let debounce: Duration
    private var pending: State?
    private var timer: Task<Void, Never>?
    /// The value before the last save, for undo (nil: there was none or it was undone).
    private var beforeLastSave: State??
    /// The first error a debounced save met, reported by the next ``flush()``.
    private var failure: (any Error)?
    /// Whether ``drain()`` is saving; at most one runs, so saves never overtake each other
    /// (the actor is reentrant while a save awaits the store).
    private var isSaving = false
    /// Callers waiting for the running drain to end.
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Carries ``submit(_:)`` calls to the actor one at a time, in order.
    private nonisolated let inbox = BackgroundWriter()

    /// A persister of `key` in `store`.
    public init(store: ChronoStore, key: String, debounce: Duration = .milliseconds(250)) {
        self.store = store
        self.key = key
        self.debounce = debounce
    }

    /// Schedules `state` to be saved once no newer state arrives for ``debounce``.
    public func schedule(_ state: State) {
        pending = state
        timer?.cancel()
        timer = Task { [debounce] in
            try? await Task.sleep(for: debounce)
            guard !Task.isCancelled else { return }
            await self.drain()
        }
    }

    /// Schedules `state` from synchronous code (a property observer on the main actor): the
    /// caller does no encoding or I/O and never waits. Submissions reach the actor in order.
    public nonisolated func submit(_ state: State) {
        inbox.enqueue { await self.schedule(state) }
    }

    /// Saves a scheduled (or submitted) state now, if there is one, and waits for a save in flight.
    /// - Throws: the error of a save (this one, or a debounced one since the last flush).
    public func flush() async throws {
        try await inbox.flush()
        timer?.cancel()
        timer = nil
        while isSaving || pending != nil {
            if isSaving { await withCheckedContinuation { idleWaiters.append($0) } } else { await drain() }
        }
        if let error = failure {
            failure = nil
            throw error
        }
    }

    /// Writes back the value the last save replaced (removing the key if there was none), as a
    /// new commit labelled "Undo Save KEY", and returns it; nil when there is no save to undo.
    /// A pending scheduled state is dropped.
    public func undoLastSave() async throws -> State?? {
        try await inbox.flush()
        timer?.cancel()
        pending = nil
        while isSaving { await withCheckedContinuation { idleWaiters.append($0) } }
        guard let previous = beforeLastSave else { return nil }
        beforeLastSave = nil
        if let value = previous {
            try await store.setValue(value, forKey: key, label: "Undo Save \(key)")
        } else {
            try await store.removeValue(forKey: key, label: "Undo Save \(key)")
        }
        return .some(previous)
    }

    /// Saves pending states, newest last, until none is left; returns at once if a drain runs
    /// already (it picks up the pending state).
    private func drain() async {
        guard !isSaving else { return }
        isSaving = true
        while let state = pending {
            pending = nil
            do { try await write(state) } catch { if failure == nil { failure = error } }
        }
        isSaving = false
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func write(_ state: State) async throws {
        let previous = try await store.value(State.self, forKey: key)
        guard previous != state else { return }
        try await store.setValue(state, forKey: key, label: "Save \(key)")
        beforeLastSave = .some(previous)
    }
}
