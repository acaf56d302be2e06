// Transactions: atomic multi-datastore commits, rollback on throw, nesting, read-only reads.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

struct Oops: Error, Equatable {}

@Suite struct TransactionTests {
    @Test func severalDatastoresCommitAtomicallyAsOneLabelledRoot() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        let counters = store.datastore(CounterFormat.self)
        let before = try await store.history().count
        try await store.transaction(label: "Add Ann") {
            try await people.persist(person(1))
            try await counters.persist(Counter(id: "people", value: 1))
        }
        let history = try await store.history()
        #expect(history.count == before + 1)
        #expect(history.first?.label == "Add Ann")
        #expect(history.first?.isHead == true)
        try await store.undo()
        #expect(try await people.count() == 0)
        #expect(try await counters.count() == 0)
    }

    @Test func aThrownErrorRollsEverythingBack() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        await #expect(throws: Oops()) {
            try await store.transaction {
                try await counters.persist(Counter(id: "a", value: 2))
                try await counters.persist(Counter(id: "b", value: 2))
                #expect(try await counters.load("a")?.value == 2, "a transaction sees its own edits")
                throw Oops()
            }
        }
        #expect(try await counters.load("a")?.value == 1)
        #expect(try await counters.load("b") == nil)
        // The writer was released: the next transaction runs.
        try await counters.persist(Counter(id: "c", value: 3))
        #expect(try await counters.count() == 2)
    }

    @Test func aNestedTransactionJoinsTheOuterOne() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let before = try await store.history().count
        await #expect(throws: Oops()) {
            try await store.transaction(label: "outer") {
                try await store.transaction(label: "inner") { try await counters.persist(Counter(id: "inner", value: 1)) }
                throw Oops()
            }
        }
        #expect(try await counters.count() == 0, "the inner write rolled back with the outer transaction")
        try await store.transaction(label: "outer") {
            try await store.transaction(label: "inner") { try await counters.persist(Counter(id: "inner", value: 1)) }
            try await counters.persist(Counter(id: "outer", value: 2))
        }
        let history = try await store.history()
        #expect(history.count == before + 1)
        #expect(history.first?.label == "outer")
    }

    @Test func childTasksJoinTheTransaction() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        try await store.transaction {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 { group.addTask { try await counters.persist(Counter(id: "c\(index)", value: index)) } }
                try await group.waitForAll()
            }
        }
        #expect(try await counters.count() == 20)
        #expect(try await store.history().count == 2)
    }

    @Test func concurrentTransactionsSerializeWithoutLosingUpdates() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "n", value: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await store.transaction {
                        let current = try await counters.load("n")!.value
                        await Task.yield()
                        try await counters.persist(Counter(id: "n", value: current + 1))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await counters.load("n")?.value == 40)
    }

    @Test func readOnlyTransactionsRefuseWritesAndSeeOneRoot() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        await #expect(throws: ChronoStoreError.writeInReadOnlyTransaction) {
            try await store.read { try await counters.persist(Counter(id: "b", value: 1)) }
        }
        await #expect(throws: ChronoStoreError.writeInReadOnlyTransaction) {
            try await store.read { try await store.transaction { try await counters.persist(Counter(id: "b", value: 1)) } }
        }
        try await store.read {
            let first = try await counters.load("a")
            // Another task commits; this read still sees the root it started on. (A plain `Task`
            // would inherit the read transaction.)
            _ = try await Task.detached { try await counters.persist(Counter(id: "a", value: 2)) }.value
            #expect(try await counters.load("a") == first)
        }
        #expect(try await counters.load("a")?.value == 2)
    }

    @Test func storeWideOperationsInsideATransactionAreRefused() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        await #expect(throws: ChronoStoreError.operationInsideTransaction("undo")) {
            try await store.transaction { try await store.undo() }
        }
    }

    @Test func anEscapedSequenceThrowsAfterItsTransactionEnds() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        var escaped: RecordSequence<CounterFormat>.AsyncIterator?
        try await store.read { escaped = counters.loadAll().makeAsyncIterator() }
        await #expect(throws: ChronoStoreError.transactionFinished) { _ = try await escaped?.next() as Counter? }
    }
}
