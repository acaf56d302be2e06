// Failed syncs latch a store read-only until it is reopened; failed writes leave the previous commit.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// A store file that fails chosen writes and truncations once (ENOSPC), then works again:
/// a full disk, unlike ``FaultInjectingFile/crash(afterOperations:)``, which fails for good.
///
/// `@unchecked Sendable`: `remainingBeforeFailure` is guarded by `lock`; `inner` is thread-safe.
final class FlakyFile: StoreFile, @unchecked Sendable {
    let inner: FaultInjectingFile
    private let lock = Lock()
    private var remainingBeforeFailure: Int?
    private(set) var failureCount = 0

    init(_ inner: FaultInjectingFile) { self.inner = inner }

    var name: String { inner.name }

    /// Makes the `count`-th write or truncation from now (0: the next) fail, once; nil disarms.
    func failOnce(afterOperations count: Int?) { lock.withLock { remainingBeforeFailure = count } }

    private func tick(_ operation: String) throws {
        try lock.withLock {
            guard let remaining = remainingBeforeFailure else { return }
            if remaining > 0 {
                remainingBeforeFailure = remaining - 1
                return
            }
            remainingBeforeFailure = nil
            failureCount += 1
            throw IOError(operation: operation, path: name, code: Platform.noSpace)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try inner.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try tick("pwrite")
        try inner.write(bytes, at: offset)
    }

    func synchronize() throws { try inner.synchronize() }
    func byteCount() throws -> UInt64 { try inner.byteCount() }

    func truncate(to byteCount: UInt64) throws {
        try tick("ftruncate")
        try inner.truncate(to: byteCount)
    }
}

/// Helpers shared by the sync-failure tests.
enum SyncFailureSupport {
    /// Every entry of every collection.
    static func everything(_ store: Store) throws -> [String: [[UInt8]: [UInt8]]] {
        let reader = try store.beginRead()
        defer { reader.close() }
        var result: [String: [[UInt8]: [UInt8]]] = [:]
        for name in try reader.collectionNames() {
            try reader.scan(name, range: .all, reverse: false) { key, value in
                result[name, default: [:]][key] = value
                return true
            }
        }
        return result
    }

    /// One transaction's edits to "items": `count` entries `prefix-i`, and the key "doomed" deleted.
    struct Edits {
        var puts: [([UInt8], [UInt8])]

        init(prefix: String, count: Int) {
            puts = (0..<count).map { index in
                (bytes("\(prefix)-\(index)"), bytes("\(prefix) \(index) " + String(repeating: "x", count: index * 7)))
            }
        }

        /// What "items" holds after these edits are applied to `model`.
        func applied(to model: [[UInt8]: [UInt8]]) -> [[UInt8]: [UInt8]] {
            var next = model
            for (key, value) in puts { next[key] = value }
            next[bytes("doomed")] = nil
            return next
        }
    }

    /// Commits `edits` in one write transaction.
    @discardableResult
    static func commit(_ store: Store, _ edits: Edits) throws -> TransactionID? {
        let (_, root) = try store.write { transaction in
            for (key, value) in edits.puts { try transaction.put(key, value, in: "items") }
            try transaction.delete(bytes("doomed"), in: "items")
        }
        return root
    }

    /// Commits `count` entries `prefix-i` and deletes "doomed"; on success `model` follows.
    @discardableResult
    static func commit(
        _ store: Store, prefix: String, count: Int = 40, into model: inout [[UInt8]: [UInt8]]
    ) throws -> TransactionID? {
        let edits = Edits(prefix: prefix, count: count)
        let root = try commit(store, edits)
        model = edits.applied(to: model)
        return root
    }

    static let injectedSyncFailure = IOError(
        operation: "fdatasync", path: "sync-failure", code: IOError.injectedFailureCode)
}

@Suite("Sync failure")
struct SyncFailureTests {
    @Test func failedSyncLatchesWritesOffUntilTheStoreIsReopened() throws {
        let file = FaultInjectingFile(name: "sync-failure")
        let store = try Store.create(in: file)
        var model: [[UInt8]: [UInt8]] = [:]
        let lastGood = try #require(try SyncFailureSupport.commit(store, prefix: "good", into: &model))
        let modelBeforeFailure = model
        let oldReader = try store.beginRead()

        file.failSyncs(1)
        let latched = StoreError.writesDisabledAfterSyncFailure(underlying: SyncFailureSupport.injectedSyncFailure)
        let failed = SyncFailureSupport.Edits(prefix: "failed", count: 40)
        let attempted = failed.applied(to: model)
        #expect(throws: latched) { try SyncFailureSupport.commit(store, failed) }
        #expect(file.syncCount == 2, "creation and the good commit synced; the failed sync is not counted")

        // Every later write is refused the same way, though syncs would now succeed.
        #expect(throws: latched) { try store.write { try $0.put(bytes("later"), bytes("refused"), in: "items") } }
        #expect(throws: latched) { try store.write { try $0.delete(bytes("good-0"), in: "items") } }
        #expect(throws: latched) { _ = try store.beginWrite() }
        #expect(throws: latched) { try store.write { try $0.dropCollection("items") } }

        // Reads still work, and show the last successful commit.
        #expect(try store.snapshot.head.transaction == lastGood)
        #expect(try SyncFailureSupport.everything(store) == ["items": modelBeforeFailure])
        #expect(try oldReader.count(in: "items") == modelBeforeFailure.count)
        oldReader.close()
        #expect(try store.verify().problems == [])

        // Reopening the same file (the failing sync is spent) allows writes again. The failed
        // commit's outcome is unknown to its caller: the reopened store holds exactly the last
        // good commit or exactly the failed one, never a mix.
        try store.close()
        #expect(throws: StoreError.storeClosed) { _ = try store.beginRead() }
        let reopened = try Store.open(file: file)
        let contents = try SyncFailureSupport.everything(reopened)
        #expect(contents == ["items": modelBeforeFailure] || contents == ["items": attempted])
        var afterReopen = contents["items"] ?? [:]
        let root = try SyncFailureSupport.commit(reopened, prefix: "after-reopen", into: &afterReopen)
        #expect(root != nil)
        #expect(try SyncFailureSupport.everything(reopened) == ["items": afterReopen])
        #expect(try reopened.verify().problems == [])
        try reopened.close()
        let again = try Store.open(file: FaultInjectingFile(name: "copy", image: file.durableImage))
        #expect(try SyncFailureSupport.everything(again) == ["items": afterReopen])
    }

    @Test func failedCheckpointSyncInDeferredModeLatchesWritesOff() throws {
        let file = FaultInjectingFile(name: "sync-failure")
        let store = try Store.create(in: file, options: StoreOptions(durability: .deferred, checkpointInterval: 4))
        var model: [[UInt8]: [UInt8]] = [:]
        for round in 0..<3 { try SyncFailureSupport.commit(store, prefix: "deferred-\(round)", count: 10, into: &model) }
        let syncsBefore = file.syncCount
        file.failSyncs(1)
        let latched = StoreError.writesDisabledAfterSyncFailure(underlying: SyncFailureSupport.injectedSyncFailure)
        // The fourth unsynced commit reaches the checkpoint and syncs; that sync fails.
        #expect(throws: latched) { try SyncFailureSupport.commit(store, SyncFailureSupport.Edits(prefix: "checkpoint", count: 10)) }
        #expect(file.syncCount == syncsBefore)
        #expect(throws: latched) { try store.write { try $0.put(bytes("later"), bytes("refused"), in: "items") } }
        #expect(try SyncFailureSupport.everything(store) == ["items": model])
        #expect(try store.verify().problems == [])
    }

    @Test func failedExplicitSynchronizeLatchesWritesOff() throws {
        let file = FaultInjectingFile(name: "sync-failure")
        let store = try Store.create(in: file, options: StoreOptions(durability: .deferred, checkpointInterval: 100))
        var model: [[UInt8]: [UInt8]] = [:]
        try SyncFailureSupport.commit(store, prefix: "pending", count: 10, into: &model)
        file.failSyncs(1)
        let latched = StoreError.writesDisabledAfterSyncFailure(underlying: SyncFailureSupport.injectedSyncFailure)
        #expect(throws: latched) { try store.synchronize() }
        #expect(throws: latched) { try store.write { try $0.put(bytes("later"), bytes("refused"), in: "items") } }
        // The unsynced commit stays visible to this process's readers.
        #expect(try SyncFailureSupport.everything(store) == ["items": model])
        try store.close()
        let reopened = try Store.open(file: file)
        defer { try? reopened.close() }
        try SyncFailureSupport.commit(reopened, prefix: "after-reopen", count: 10, into: &model)
        #expect(try SyncFailureSupport.everything(reopened) == ["items": model])
    }

    /// A write that fails (a full disk) at any write or truncation of a commit leaves the store
    /// at the previous commit, readable and writable, and later commits go on from there.
    @Test(arguments: [Durability.durable, .deferred])
    func failedWriteAtAnyPointLeavesThePreviousCommit(durability: Durability) throws {
        let memory = FaultInjectingFile(name: "flaky")
        let file = FlakyFile(memory)
        let store = try Store.create(in: file, options: StoreOptions(durability: durability, checkpointInterval: 3))
        var model: [[UInt8]: [UInt8]] = [:]
        try SyncFailureSupport.commit(store, prefix: "first", count: 200, into: &model)
        try store.write { try $0.put(bytes("doomed"), bytes("deleted by every attempt"), in: "items") }
        model[bytes("doomed")] = bytes("deleted by every attempt")
        let previous = try store.snapshot.head.transaction
        let reader = try store.beginRead()
        defer { reader.close() }

        var failuresSeen = 0
        var committed = false
        for failurePoint in 0..<64 where !committed {
            file.failOnce(afterOperations: failurePoint)
            do {
                try SyncFailureSupport.commit(store, prefix: "attempt", count: 300, into: &model)
                committed = true
                file.failOnce(afterOperations: nil)
            } catch let error as StoreError {
                failuresSeen += 1
                guard case .io(let underlying) = error else {
                    Issue.record("failure point \(failurePoint): \(error)")
                    break
                }
                #expect(underlying.code == Platform.noSpace)
                #expect(try store.snapshot.head.transaction == previous, "failure point \(failurePoint)")
                #expect(try SyncFailureSupport.everything(store) == ["items": model], "failure point \(failurePoint)")
                #expect(try reader.count(in: "items") == model.count)
            }
        }
        #expect(committed)
        #expect(failuresSeen >= 3, "the commit should make several writes")
        #expect(file.failureCount == failuresSeen)
        #expect(try SyncFailureSupport.everything(store) == ["items": model])
        try SyncFailureSupport.commit(store, prefix: "afterwards", count: 20, into: &model)
        #expect(try store.verify().problems == [])
        try store.close()
        let reopened = try Store.open(file: FaultInjectingFile(name: "copy", image: memory.durableImage))
        defer { try? reopened.close() }
        #expect(try SyncFailureSupport.everything(reopened) == ["items": model])
        #expect(try reopened.verify().problems == [])
    }

    /// A crash (every later file call fails) at any operation of a commit: the commit throws,
    /// the store still publishes the previous commit, and the disk holds the previous commit
    /// (or, once the header slot was written, exactly the new one).
    @Test func crashAtAnyOperationOfACommitLeavesThePreviousCommitOnDisk() throws {
        let template = FaultInjectingFile(name: "template")
        var model: [[UInt8]: [UInt8]] = [:]
        do {
            let store = try Store.create(in: template)
            try SyncFailureSupport.commit(store, prefix: "first", count: 200, into: &model)
            try store.close()
        }
        var generator = SeededGenerator(seed: 99)
        var crashes = 0
        for crashPoint in 0..<64 {
            let file = FaultInjectingFile(name: "crash", image: template.durableImage)
            let store = try Store.open(file: file)
            let previous = try store.snapshot.head.transaction
            let edits = SyncFailureSupport.Edits(prefix: "attempt", count: 300)
            let attempted = edits.applied(to: model)
            file.crash(afterOperations: crashPoint)
            do {
                try SyncFailureSupport.commit(store, edits)
                break
            } catch let error as StoreError {
                crashes += 1
                #expect(file.hasCrashed)
                switch error {
                case .io(let underlying), .writesDisabledAfterSyncFailure(let underlying):
                    #expect(underlying.code == IOError.injectedFailureCode)
                default:
                    Issue.record("crash point \(crashPoint): unexpected \(error)")
                }
            }
            #expect(try store.snapshot.head.transaction == previous)
            let durable = try Store.open(file: FaultInjectingFile(name: "durable", image: file.durableImage))
            #expect(try SyncFailureSupport.everything(durable) == ["items": model], "crash point \(crashPoint)")
            for _ in 0..<3 {
                let image = file.crashImage(using: &generator)
                let reopened = try Store.open(file: FaultInjectingFile(name: "power loss", image: image))
                let contents = try SyncFailureSupport.everything(reopened)
                #expect(contents == ["items": model] || contents == ["items": attempted], "crash point \(crashPoint)")
                #expect(try reopened.verify().problems == [])
            }
        }
        #expect(crashes >= 3)
    }
}
