// Delivering committed changes to observers: from this process's transactions, from history
// operations, and from other processes' commits.
import ChronoStoreEngine

/// Keeps the observers of a store and the root they last heard about.
///
/// While anyone observes, the hub holds a read transaction on the last delivered root (pinning
/// it), so it can always diff that root against a newer head. After a local commit whose base is
/// that root, it delivers the transaction's own change log (O(changes)); otherwise (undo, redo,
/// revert, restore, another process) it diffs each observed collection (see ``RootDiff``).
/// A polling task notices other processes' commits every `pollInterval`.
///
/// `@unchecked Sendable`: all mutable state is guarded by `lock`.
final class ChangeHub: @unchecked Sendable {
    typealias Handler = @Sendable (RawChange) -> Void

    private struct Observer {
        var collection: String
        var handler: Handler
        var finish: @Sendable () -> Void
    }

    private let engine: Store
    private let watchesOtherProcesses: Bool
    private let lock = Lock()
    // Guarded by `lock`:
    private var observers: [UInt64: Observer] = [:]
    private var nextToken: UInt64 = 0
    private var observedRoot: ReadTransaction?
    private var poller: Task<Void, Never>?
    private var isShutDown = false

    static let pollInterval: Duration = .milliseconds(100)

    init(engine: Store, watchesOtherProcesses: Bool) {
        self.engine = engine
        self.watchesOtherProcesses = watchesOtherProcesses
    }

    /// Registers an observer of `collection`; returns a token for ``remove(_:)``.
    func add(collection: String, handler: @escaping Handler, finish: @escaping @Sendable () -> Void) -> UInt64? {
        lock.withLock { () -> UInt64? in
            guard !isShutDown else { return nil }
            if observedRoot == nil {
                observedRoot = try? engine.beginRead()
                if observedRoot == nil { return nil }
            }
            nextToken += 1
            observers[nextToken] = Observer(collection: collection, handler: handler, finish: finish)
            if poller == nil && watchesOtherProcesses { startPollingLocked() }
            return nextToken
        }
    }

    func remove(_ token: UInt64) {
        lock.withLock {
            observers.removeValue(forKey: token)
            if observers.isEmpty { stopLocked() }
        }
    }

    /// After a local commit: deliver `recorded` if it bridges exactly from the observed root to the
    /// head, else diff.
    func publish(from base: TransactionID?, recorded: [RawChange]?) {
        lock.withLock {
            guard let observed = observedRoot, !observers.isEmpty else { return }
            guard let current = try? engine.beginRead() else { return }
            let head = current.root.transaction
            if head == observed.root.transaction {
                current.close()
                return
            }
            let oneStep = recorded != nil && base == observed.root.transaction && current.root.parent.birth == base
            if oneStep, let recorded {
                deliverLocked(recorded)
            } else {
                deliverLocked(diffLocked(from: observed, to: current))
            }
            observed.close()
            observedRoot = current
        }
    }

    /// After a history operation or when another process committed: diff to the head.
    func catchUp() { publish(from: nil, recorded: nil) }

    private func diffLocked(from old: ReadTransaction, to new: ReadTransaction) -> [RawChange] {
        let collections = Set(observers.values.map(\.collection))
        var changes: [RawChange] = []
        for collection in collections.sorted() {
            if let found = try? RootDiff.changes(in: collection, from: old, to: new) { changes += found }
        }
        return changes
    }

    private func deliverLocked(_ changes: [RawChange]) {
        for change in changes {
            for observer in observers.values where observer.collection == change.collection {
                observer.handler(change)
            }
        }
    }

    private func startPollingLocked() {
        poller = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: ChangeHub.pollInterval)
                guard let self else { return }
                self.pollOnce()
            }
        }
    }

    private func pollOnce() {
        guard let head = try? engine.snapshot.head.transaction else { return }
        let observed = lock.withLock { observedRoot?.root.transaction }
        if let observed, observed != head { catchUp() }
    }

    private func stopLocked() {
        poller?.cancel()
        poller = nil
        observedRoot?.close()
        observedRoot = nil
    }

    /// Ends every stream and stops watching. Called on close.
    func shutDown() {
        let finished = lock.withLock { () -> [Observer] in
            isShutDown = true
            let all = Array(observers.values)
            observers.removeAll()
            stopLocked()
            return all
        }
        for observer in finished { observer.finish() }
    }
}
