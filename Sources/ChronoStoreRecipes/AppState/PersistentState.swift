// An @Observable app state that restores itself on launch and saves itself, debounced, off the main actor.
public import ChronoStore
public import Observation

/// Turns a stored value of an older type into the current state type, for ``PersistentState``.
public struct StateMigration<State: Codable & Sendable>: Sendable {
    let migrate: @Sendable (ChronoStore, String) async throws -> State?

    /// Reads the stored value as `Old` and converts it.
    public init<Old: Codable & Sendable>(from old: Old.Type, _ convert: @escaping @Sendable (Old) -> State) {
        migrate = { store, key in try await store.value(Old.self, forKey: key).map(convert) }
    }
}

/// App state a view observes: change ``value`` on the main actor, and a ``StatePersister``
/// saves it in the background, debounced (the main actor only hands the new value over).
///
/// ```swift
/// let state = try await PersistentState.restore(from: store, key: "game", default: Game())
/// state.value.score += 1                    // observed by SwiftUI; saved 250 ms later
/// try await state.saveNow()                 // before the app is suspended
/// ```
/// Needs the Observation module: macOS 14, iOS 17 and their peers (any Linux with Swift 6).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable
public final class PersistentState<State: Codable & Sendable & Equatable> {
    /// The state. Setting it schedules a save.
    public var value: State {
        didSet { if value != oldValue { persister.submit(value) } }
    }
    /// The actor saving the state.
    @ObservationIgnored public let persister: StatePersister<State>

    init(value: State, persister: StatePersister<State>) {
        self.value = value
        self.persister = persister
    }

    /// Restores the state saved under `key`, or `initial` when there is none.
    ///
    /// A stored value that no longer decodes as `State` (its type changed) goes through
    /// `migrations` in order; the first that reads it converts it, and the converted state is
    /// saved at once. If none reads it, this throws the typed error naming the key
    /// (`ChronoStoreError.undecodableRecord(datastore:identifier:reason:)`), so the old state
    /// is never silently lost.
    public static func restore(
        from store: ChronoStore, key: String, default initial: State, debounce: Duration = .milliseconds(250),
        migrations: [StateMigration<State>] = []
    ) async throws -> PersistentState<State> {
        let persister = StatePersister<State>(store: store, key: key, debounce: debounce)
        do {
            return PersistentState(value: try await store.value(State.self, forKey: key) ?? initial, persister: persister)
        } catch ChronoStoreError.undecodableRecord(let datastore, let identifier, let reason) {
            for migration in migrations {
                guard let migrated = try? await migration.migrate(store, key) else { continue }
                try await store.setValue(migrated, forKey: key, label: "Migrate \(key)")
                return PersistentState(value: migrated, persister: persister)
            }
            throw ChronoStoreError.undecodableRecord(datastore: datastore, identifier: identifier, reason: reason)
        }
    }

    /// Saves a pending change now (call it when the app goes to the background).
    public func saveNow() async throws { try await persister.flush() }

    /// Puts back the state the last save replaced, as a new save, and shows it.
    /// - Returns: whether there was a save to undo.
    @discardableResult
    public func undoLastSave() async throws -> Bool {
        guard let previous = try await persister.undoLastSave() else { return false }
        if let previous, previous != value {
            value = previous
            try await persister.flush()  // the didSet above scheduled it; it matches what is stored, so nothing commits
        }
        return true
    }
}
