// ChronoStoreOptions.packsHistory: whole old versions or packed ones, read the same either way.
import ChronoStore
import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// `ChronoStoreOptions.packsHistory`: a handle opened with it false keeps old versions whole,
/// one opened with it true (the default) packs them, and history reads the same either way.
@Suite struct HistoryPackingOptionTests {
    /// The counter's value at each retained root, oldest first, read as of that root.
    private func valuesAsOfEachRoot(_ store: ChronoStore) async throws -> [Int] {
        let counters = store.datastore(CounterFormat.self)
        var values: [Int] = []
        for root in try await store.history().reversed() {
            try await store.read(at: .root(root.id)) { () async throws in
                values.append(try await counters.load("c")?.value ?? -1)
            }
        }
        return values
    }

    /// Old versions packed in the file, read with the engine.
    private func packedPageCount(_ path: String) throws -> UInt64 {
        let engine = try Store.open(at: path)
        defer { try? engine.close() }
        return try engine.snapshot.state.packs.packedPages
    }

    @Test func packingCanBeTurnedOffPerHandleAndHistoryReadsTheSame() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("packing.chrono"))
        var options = ChronoStoreOptions(retention: .lastRoots(40))
        options.packsHistory = false
        let whole = try ChronoStore.create(at: url, options: options)
        for value in 0..<30 { try await whole.datastore(CounterFormat.self).persist(Counter(id: "c", value: value)) }
        let unpackedValues = try await valuesAsOfEachRoot(whole)
        try await whole.close()
        #expect(unpackedValues == [-1] + Array(0..<30))
        #expect(try packedPageCount(url.path) == 0, "a handle with packsHistory false packed old versions")

        // The default packs again, and the versions packed now read as they were committed.
        let packing = try await ChronoStore.open(at: url, createIfMissing: false)
        for value in 30..<60 { try await packing.datastore(CounterFormat.self).persist(Counter(id: "c", value: value)) }
        let values = try await valuesAsOfEachRoot(packing)
        #expect(values == Array(20..<60))
        #expect(try await packing.verify().isSound)
        try await packing.close()
        #expect(try packedPageCount(url.path) > 0, "the default options packed nothing")
    }
}
