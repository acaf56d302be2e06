// The public error type: engine errors are wrapped with clear messages; user errors pass through.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct ErrorTests {
    @Test func everyCaseHasAnActionableMessage() {
        let cases: [(ChronoStoreError, String)] = [
            (.storeNotFound(path: "/x"), "no store at /x"),
            (.recordNotFound(datastore: "notes", identifier: "7"), "notes has no record with identifier 7"),
            (.indexNotBuilt(datastore: "notes", index: "tags"), "call warm()"),
            (.uniqueIndexViolation(datastore: "people", index: "email", existing: "1", conflicting: "2"), "rolled back"),
            (.unsupportedRecordVersion(datastore: "notes", version: 3, current: 2), "implement decode(version:from:)"),
            (.cannotUndo(steps: 2, available: 1), "only 1 older root(s)"),
            (.writeInReadOnlyTransaction, "read-only"),
            (.operationInsideTransaction("undo"), "after the transaction ends"),
            (.damaged(page: 12, detail: "checksum mismatch"), "page 12"),
        ]
        for (error, fragment) in cases {
            #expect(error.description.contains(fragment), "\(error)")
        }
    }

    @Test func engineErrorsArriveAsChronoStoreErrors() async throws {
        let store = try ChronoStore.inMemory()
        await #expect(throws: ChronoStoreError.cannotRedo) { try await store.redo() }
        await #expect(throws: ChronoStoreError.invalidSnapshotName("")) { try await store.createSnapshot(named: "") }
        await #expect(throws: ChronoStoreError.snapshotNotFound("nope")) { try await store.read(at: .snapshot("nope")) {} }
        let label = String(repeating: "l", count: 5000)
        await #expect(throws: ChronoStoreError.self) {
            try await store.transaction(label: label) { try await store.datastore(CounterFormat.self).persist(Counter(id: "a", value: 1)) }
        }
    }

    @Test func userErrorsPassThroughUnchanged() async throws {
        let store = try ChronoStore.inMemory()
        await #expect(throws: CancellationError.self) { try await store.transaction { throw CancellationError() } }
        await #expect(throws: Oops()) { try await store.read { throw Oops() } }
    }

    @Test func damagedStoresReportTheDamagedPageNeverData() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("damaged.chrono"))
        do {
            let store = try ChronoStore.create(at: url)
            try await store.datastore(CounterFormat.self).persist(contentsOf: (0..<500).map { Counter(id: "c\($0)", value: $0) })
            try await store.close()
        }
        // Flip bytes in the middle of every page after the header pages.
        var bytes = try Data(contentsOf: url)
        for page in stride(from: 5 * 4096, to: bytes.count, by: 4096) { bytes[page + 2000] ^= 0xFF }
        try bytes.write(to: url)
        do {
            // Opening may already find damaged state pages; otherwise the first read does.
            let store = try await ChronoStore.open(at: url, createIfMissing: false)
            _ = try await store.datastore(CounterFormat.self).loadAll().collect()
            Issue.record("read a damaged store without an error")
        } catch let error as ChronoStoreError {
            guard case .damaged(_, let detail) = error else { throw error }
            #expect(detail.contains("damaged"))
        }
    }
}
