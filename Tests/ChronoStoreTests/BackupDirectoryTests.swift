// Dated backups in a directory with retention, restoring one, verifying, and batch persists.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct BackupDirectoryTests {
    @Test func directoryBackupsKeepTheNewestPerNameAndRestore() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let backups = BackupDirectory(url: URL(fileURLWithPath: directory.file("backups")), retention: .last(2))
        for value in 1...3 {
            try await counters.persist(Counter(id: "a", value: value))
            try await store.backup(to: backups, name: "daily")
            try await Task.sleep(for: .milliseconds(5))
        }
        let kept = try ChronoStore.backups(in: backups)
        #expect(kept.count == 2)
        #expect(kept.allSatisfy { $0.name == "daily" && $0.byteCount > 0 })
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: backups.url.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath).allSatisfy { !$0.contains("partial") })

        try await counters.persist(Counter(id: "a", value: 99))
        try await store.restore(kept[0])
        #expect(try await counters.load("a")?.value == 2)
        #expect(try await store.history().first?.label == "Restore daily")
        await #expect(throws: ChronoStoreError.self) { try await store.backup(to: backups, name: "bad/name") }
    }

    @Test func verifyReportsASoundStore() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        try await store.datastore(PersonFormat.self).persist(contentsOf: (0..<200).map { person($0, tags: ["x"]) })
        var calls = 0
        let summary = try await store.verify { _, _ in calls += 1 }
        #expect(summary.isSound)
        #expect(summary.pagesChecked > 0)
    }

    @Test func persistContentsOfIsAllOrNothing() async throws {
        let store = try ChronoStore.inMemory()
        let people = store.datastore(PersonFormat.self)
        #expect(try await people.persist(contentsOf: [person(1), person(2)]) == 0)
        #expect(try await people.persist(contentsOf: [person(2), person(3)]) == 1)
        var clash = person(4)
        clash.email = person(1).email
        await #expect(throws: ChronoStoreError.self) { try await people.persist(contentsOf: [person(5), clash]) }
        #expect(try await people.count() == 3)
        #expect(try await store.history().count == 3)
    }
}
