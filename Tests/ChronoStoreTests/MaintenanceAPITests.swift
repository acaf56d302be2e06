// The engine's maintenance in the typed API: compaction with progress, backups to an app's own destination, offline replace.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

/// Backups kept in memory, as an app's cloud destination would keep them remotely.
/// `@unchecked Sendable`: `lock` guards `backups`.
private final class MemoryDestination: BackupDestination, @unchecked Sendable {
    private let lock = NSLock()
    private var backups: [(entry: BackupEntry, bytes: [UInt8])] = []

    func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupEntry {
        var bytes: [UInt8] = []
        while let chunk = try nextChunk() { bytes += chunk }
        return lock.withLock {
            let entry = BackupEntry(identifier: "\(name)-\(backups.count)", name: name, date: Date(), byteCount: UInt64(bytes.count))
            backups.append((entry, bytes))
            return entry
        }
    }

    func list() throws -> [BackupEntry] { lock.withLock { backups.map(\.entry) } }

    func delete(_ entry: BackupEntry) throws { lock.withLock { backups.removeAll { $0.entry.identifier == entry.identifier } } }

    func read(_ entry: BackupEntry, into sink: ([UInt8]) throws -> Void) throws {
        let bytes = lock.withLock { backups.first { $0.entry.identifier == entry.identifier }?.bytes }
        guard let bytes else { throw CocoaError(.fileNoSuchFile) }
        // Small chunks, so a restore really streams.
        for start in stride(from: 0, to: bytes.count, by: 1000) { try sink(Array(bytes[start..<min(start + 1000, bytes.count)])) }
    }
}

/// Counts progress calls from the store's queue.
private final class Calls: @unchecked Sendable {
    // `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var total: Int { lock.withLock { count } }
}

@Suite struct MaintenanceAPITests {
    @Test func compactShrinksTheFileReportsProgressAndKeepsEveryRecord() async throws {
        let (store, directory) = try makeStore(ChronoStoreOptions(retention: .lastRoots(1)))
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: (0..<3000).map { person($0, tags: ["t\($0 % 7)"]) })
        try await people.delete(in: KeyBounds(from: .including(100)))
        let calls = Calls()
        let summary = try await store.compact { _ in calls.add() }
        #expect(summary.byteCountAfter < summary.byteCountBefore, "\(summary)")
        #expect(summary.pagesMoved > 0)
        #expect(calls.total > 0)
        #expect(try await people.count() == 100)
        #expect(try await people.load(99)?.name == "Person 99")
        #expect(try await store.verify().isSound)
        let size = try FileManager.default.attributesOfItem(atPath: directory.file("test.chrono"))[.size] as? UInt64
        #expect(size == summary.byteCountAfter)
        try await store.close()
    }

    @Test func backupsGoToAnAppsOwnDestinationAndRestoreFromIt() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let destination = MemoryDestination()
        try await counters.persist(Counter(id: "a", value: 1))
        let calls = Calls()
        let entry = try await store.backup(to: destination, name: "nightly") { _ in calls.add() }
        #expect(entry.name == "nightly" && entry.byteCount > 0)
        #expect(try destination.list() == [entry])
        #expect(calls.total > 0)
        try await counters.persist(Counter(id: "a", value: 2))
        try await counters.persist(Counter(id: "b", value: 3))
        try await store.restore(entry, from: destination, label: "Restore nightly")
        #expect(try await counters.loadAll().collect() == [Counter(id: "a", value: 1)])
        #expect(try await store.history().first?.label == "Restore nightly")
        try await store.undo()
        #expect(try await counters.count() == 2, "a restore is an undoable commit")
        // A directory is a destination too, through the same generic call.
        let directory = try TemporaryDirectory(prefix: "typed")
        let backups = BackupDirectory(url: URL(fileURLWithPath: directory.file("backups")), retention: .last(1))
        let stored = try await backupGenerically(store, to: backups)
        #expect(try backups.list() == [stored])
    }

    private func backupGenerically(_ store: ChronoStore, to destination: some BackupDestination) async throws -> BackupEntry {
        try await store.backup(to: destination, name: "any")
    }

    @Test func replaceStoreSwapsTheWholeFileOfflineHistoryIncluded() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("app.chrono"))
        let backupURL = URL(fileURLWithPath: directory.file("saved.chrono"))
        let store = try await ChronoStore.open(at: url)
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        try await store.backup(to: backupURL)
        let destination = MemoryDestination()
        try await counters.persist(Counter(id: "b", value: 2))
        let entry = try await store.backup(to: destination, name: "two")
        for value in 3...6 { try await counters.persist(Counter(id: "c", value: value)) }
        await #expect(throws: ChronoStoreError.storeInUse(path: url.path)) {
            try await ChronoStore.replaceStore(at: url, withBackup: backupURL)
        }
        try await store.close()

        try await ChronoStore.replaceStore(at: url, withBackup: backupURL)
        let replaced = try await ChronoStore.open(at: url)
        #expect(try await replaced.datastore(CounterFormat.self).loadAll().collect() == [Counter(id: "a", value: 1)])
        #expect(try await replaced.history().count == 1, "the backup's history replaces the store's")
        try await replaced.close()

        try await ChronoStore.replaceStore(at: url, with: entry, from: destination)
        let fromDestination = try await ChronoStore.open(at: url)
        #expect(try await fromDestination.datastore(CounterFormat.self).loadAll().collect().map(\.id) == ["a", "b"])
        try await fromDestination.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.contains("download") })
    }
}
