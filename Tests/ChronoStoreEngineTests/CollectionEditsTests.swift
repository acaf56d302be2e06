// A write transaction remembers the collection it edited last: switching, dropping and recreating stay correct.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Collection edits in one write transaction")
struct CollectionEditsTests {
    @Test func interleavedPutsDeletesDropsAndRecreationsLandInTheRightCollections() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("edits.chrono"))
        defer { try? store.close() }
        try store.write { transaction in
            for index in 0..<50 { try transaction.put(bytes("kept-\(index)"), bytes("old \(index)"), in: "kept") }
            try transaction.put(bytes("gone"), bytes("x"), in: "dropped")
        }
        try store.write { transaction in
            for index in 0..<100 {
                // Alternate collections so the remembered one keeps changing.
                try transaction.put(bytes("a-\(index)"), bytes("a \(index)"), in: "alpha")
                try transaction.put(bytes("b-\(index)"), bytes("b \(index)"), in: "beta")
                if index % 3 == 0 { #expect(try transaction.delete(bytes("kept-\(index / 3)"), in: "kept")) }
            }
            #expect(try transaction.delete(bytes("gone"), in: "dropped"))
            #expect(try transaction.dropCollection("alpha"))
            // Deleting from a collection dropped in this transaction finds nothing.
            #expect(try transaction.delete(bytes("a-1"), in: "alpha") == false)
            #expect(try transaction.value(forKey: bytes("a-1"), in: "alpha") == nil)
            try transaction.put(bytes("again"), bytes("recreated"), in: "alpha")
            try transaction.put(bytes("again-2"), bytes("recreated 2"), in: "alpha")
            #expect(try transaction.count(in: "alpha") == 2)
            #expect(try transaction.count(in: "beta") == 100)
            #expect(try transaction.count(in: "kept") == 16)
            #expect(try transaction.count(in: "dropped") == 0)
            // An invalid name is still refused after a run of valid ones.
            #expect(throws: StoreError.self) { try transaction.put(bytes("k"), bytes("v"), in: "") }
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try entries(reader, "alpha").map { text($0.0) } == ["again", "again-2"])
        #expect(try reader.count(in: "beta") == 100)
        #expect(try reader.value(forKey: bytes("b-99"), in: "beta") == bytes("b 99"))
        #expect(try reader.count(in: "kept") == 16)
        #expect(try reader.value(forKey: bytes("kept-49"), in: "kept") == bytes("old 49"))
        #expect(try reader.value(forKey: bytes("kept-0"), in: "kept") == nil)
        #expect(try reader.count(in: "dropped") == 0)
        #expect(try store.verify().isSound)
    }
}
