// Opening, creating and closing stores; in-memory stores; the default location.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct OpeningTests {
    @Test func openCreatesMissingStoreAndParentDirectoriesThenReopensWithData() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("nested/deeper/app.chrono"))
        let options = ChronoStoreOptions(pageSize: 8192, durability: .durable, retention: .lastRoots(10), cacheByteCount: 1 << 20)
        do {
            let store = try await ChronoStore.open(at: url, options: options)
            try await store.datastore(CounterFormat.self).persist(Counter(id: "a", value: 1))
            try await store.close()
        }
        let reopened = try await ChronoStore.open(at: url, options: ChronoStoreOptions(), createIfMissing: false)
        #expect(try await reopened.datastore(CounterFormat.self).load("a") == Counter(id: "a", value: 1))
        #expect(reopened.url == url)
        try await reopened.close()
        await #expect(throws: ChronoStoreError.storeClosed) { try await reopened.datastore(CounterFormat.self).count() }
    }

    @Test func recordsWrittenWithCopiedReadsReadBackThroughTheMapAndTheOtherWayRound() async throws {
        #expect(ChronoStoreOptions().memoryMappedReads, "reads go through a memory map by default")
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("mapped.chrono"))
        var copying = ChronoStoreOptions()
        copying.memoryMappedReads = false
        let expected = (0..<300).map { Counter(id: "c\($0)", value: $0) }
        do {
            let store = try await ChronoStore.open(at: url, options: copying)
            for counter in expected { try await store.datastore(CounterFormat.self).persist(counter) }
            try await store.close()
        }
        for options in [ChronoStoreOptions(), copying] {
            let store = try await ChronoStore.open(at: url, options: options, createIfMissing: false)
            let counters = store.datastore(CounterFormat.self)
            for counter in expected { #expect(try await counters.load(counter.id) == counter) }
            try await counters.persist(Counter(id: options.memoryMappedReads ? "mapped" : "copied", value: 1))
            try await store.close()
        }
        let last = try await ChronoStore.open(at: url, createIfMissing: false)
        let counters = last.datastore(CounterFormat.self)
        #expect(try await counters.count() == expected.count + 2)
        #expect(try await counters.load("mapped") == Counter(id: "mapped", value: 1))
        #expect(try await counters.load("copied") == Counter(id: "copied", value: 1))
        try await last.close()
    }

    @Test func aReadOnlyOpenReadsCreatesNothingAndRefusesWrites() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("app.chrono"))
        do {
            let store = try await ChronoStore.open(at: url)
            try await store.datastore(CounterFormat.self).persist(Counter(id: "a", value: 1))
            try await store.close()
        }
        try FileManager.default.removeItem(atPath: url.path + ".lock")
        let reader = try await ChronoStore.open(at: url, readOnly: true)
        #expect(try await reader.datastore(CounterFormat.self).load("a") == Counter(id: "a", value: 1))
        await #expect(throws: ChronoStoreError.readOnlyStore(path: url.path)) {
            try await reader.datastore(CounterFormat.self).persist(Counter(id: "b", value: 2))
        }
        try await reader.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["app.chrono"])
        let missing = URL(fileURLWithPath: directory.file("missing.chrono"))
        #expect(throws: ChronoStoreError.storeNotFound(path: missing.path)) { try ChronoStore.open(at: missing, readOnly: true) }
    }

    @Test func openingMissingOrForeignFilesIsATypedErrorAndWritesNothing() throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let missing = URL(fileURLWithPath: directory.file("missing.chrono"))
        #expect(throws: ChronoStoreError.storeNotFound(path: missing.path)) {
            try ChronoStore.open(at: missing, createIfMissing: false)
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        let foreign = URL(fileURLWithPath: directory.file("notes.txt"))
        try Data(repeating: 65, count: 20000).write(to: foreign)
        do {
            _ = try ChronoStore.open(at: foreign)
            Issue.record("opened a text file")
        } catch let error as ChronoStoreError {
            guard case .notAStore = error else { throw error }
            #expect(error.description.contains("not a ChronoStore file"))
        }
        #expect(try Data(contentsOf: foreign) == Data(repeating: 65, count: 20000))
    }

    @Test func creatingOverAnExistingFileFails() throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("a.chrono"))
        _ = try ChronoStore.create(at: url)
        #expect(throws: ChronoStoreError.storeAlreadyExists(path: url.path)) { try ChronoStore.create(at: url) }
    }

    @Test func invalidPageSizeIsAnOptionsError() throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        #expect(throws: ChronoStoreError.self) {
            try ChronoStore.create(at: URL(fileURLWithPath: directory.file("a.chrono")), options: ChronoStoreOptions(pageSize: 1000))
        }
    }

    @Test func inMemoryStoreRunsTheSameEngineWithHistory() async throws {
        let store = try ChronoStore.inMemory()
        #expect(store.url == nil)
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        try await counters.persist(Counter(id: "a", value: 2))
        try await store.undo()
        #expect(try await counters.load("a")?.value == 1)
        try await store.redo()
        #expect(try await counters.load("a")?.value == 2)
        #expect(try await store.history().count == 3)
    }

    @Test func defaultLocationNeverThrowsAndEndsWithTheName() {
        let url = ChronoStore.defaultURL(named: "Journal")
        #expect(url.lastPathComponent == "Journal.chrono")
        let application = url.deletingLastPathComponent().lastPathComponent
        #expect(!application.isEmpty)
        #if !canImport(Darwin)
            let environment = ProcessInfo.processInfo.environment
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
                #expect(url.path.hasPrefix(data))
            } else {
                #expect(url.path.contains("/.local/share/"))
            }
        #endif
    }
}
