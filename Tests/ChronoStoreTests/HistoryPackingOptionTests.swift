// ChronoStoreOptions.packsHistory: whole old versions or packed ones, read the same either way.
import ChronoStore
@testable import ChronoStoreEngine
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

    /// A background packing commit that fails (an old version it packs is damaged on disk) is
    /// reported by `backgroundPackingFailure` as the typed damage error naming the page, while
    /// every persist succeeds; once retention drops the damaged version, packing succeeds again
    /// and the report clears.
    @Test func aFailedBackgroundPackingCommitIsReportedWhileWritesGoOn() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("failing.chrono"))
        let options = ChronoStoreOptions(retention: .lastRoots(30))
        let first = try ChronoStore.create(at: url, options: options)
        _ = try await first.datastore(CounterFormat.self).persist(contentsOf: (0..<400).map { Counter(id: "c\($0)", value: 0) })
        _ = try await first.datastore(CounterFormat.self).persist(Counter(id: "c200", value: 1))
        #expect(first.backgroundPackingFailure == nil)
        try await first.close()
        // Damage the leaf that last persist replaced: it is kept whole for the older root.
        let engine = try Store.open(at: url.path)
        let reader = try engine.beginRead()
        let dead = try LoadedRoot(reader.snapshot.state.head, reader: reader.treeReader).invalidatedPages(reader: reader.treeReader)
        let leaf = try #require(try dead.first { try reader.treeReader.read($0, kind: nil, cached: false).kindByte == PageKind.leaf.rawValue })
        reader.close()
        let pageSize = UInt64(engine.pageSize)
        try engine.close()
        let handle = try FileHandle(forUpdating: url)
        try handle.seek(toOffset: leaf.page.rawValue * pageSize + pageSize / 2)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: leaf.page.rawValue * pageSize + pageSize / 2)
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()

        let store = try await ChronoStore.open(at: url, options: options, createIfMissing: false)
        let counters = store.datastore(CounterFormat.self)
        var reported: (any Error)?
        for round in 0..<80 {
            _ = try await counters.persist(Counter(id: "c\(round % 50)", value: round + 2))
            if reported == nil { reported = store.backgroundPackingFailure }
        }
        let error = try #require(reported as? ChronoStoreError, "packing reached the damaged version and failed: \(String(describing: reported))")
        guard case .damaged(let page, _) = error else {
            Issue.record("expected damage, got \(error)")
            return
        }
        #expect(page == leaf.page.rawValue)
        #expect(try await counters.load("c29")?.value == 79 + 2)
        #expect(try await counters.load("c49")?.value == 49 + 2)
        // Retention dropped the damaged version long ago; the last packing commits succeeded.
        try await store.synchronize()
        #expect(store.backgroundPackingFailure == nil)
        #expect(try await store.verify().isSound)
        try await store.close()
    }
}

