// The binary coder round-trips Codable values and renders any record as JSON; JSON and property
// list coders round-trip too.
import ChronoStore
import Foundation
import Testing

struct Everything: Codable, Equatable, Sendable {
    enum Mood: String, Codable, Sendable { case happy, sad }
    struct Inner: Codable, Equatable, Sendable {
        var values: [Double]
        var flag: Bool?
    }
    var int: Int
    var int8: Int8
    var uint64: UInt64
    var negative: Int64
    var float: Float
    var double: Double
    var string: String
    var optionalPresent: String?
    var optionalMissing: String?
    var data: Data
    var date: Date
    var uuid: UUID
    var mood: Mood
    var inner: Inner
    var nested: [[Int]]
    var dictionary: [String: Int]
    var url: URL
}

@Suite struct ValueCoderTests {
    static let sample = Everything(
        int: 42, int8: -8, uint64: .max, negative: .min, float: 1.5, double: -0.25, string: "héllo \"quoted\"\n\0",
        optionalPresent: "yes", optionalMissing: nil, data: Data([0, 1, 2, 255]),
        date: Date(timeIntervalSince1970: 1_700_000_000.5), uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        mood: .sad, inner: .init(values: [1, 2.5, -3], flag: nil), nested: [[1], [], [2, 3]], dictionary: ["a": 1],
        url: URL(string: "https://example.com/a?b=c")!)

    @Test func binaryCoderRoundTripsEveryKindOfValue() throws {
        let coder = ChronoBinaryCoder()
        let bytes = try coder.encode(Self.sample)
        #expect(try coder.decode(Everything.self, from: bytes) == Self.sample)
        // Compact: smaller than the JSON encoding.
        #expect(bytes.count < (try JSONEncoder().encode(Self.sample)).count)
    }

    @Test func binaryCoderRoundTripsTopLevelScalarsAndCollections() throws {
        let coder = ChronoBinaryCoder()
        #expect(try coder.decode(Int.self, from: coder.encode(-5)) == -5)
        #expect(try coder.decode(String.self, from: coder.encode("x")) == "x")
        #expect(try coder.decode([String?].self, from: coder.encode(["a", nil])) == ["a", nil])
        #expect(try coder.decode([UUID: Int].self, from: coder.encode([Self.sample.uuid: 1])) == [Self.sample.uuid: 1])
    }

    @Test func jsonDescriptionNeedsNoSwiftType() throws {
        let bytes = try ChronoBinaryCoder().encode(Self.sample)
        let text = try ChronoBinaryCoder.jsonDescription(of: bytes)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        #expect(object["int"] as? Int == 42)
        #expect(object["string"] as? String == "héllo \"quoted\"\n\0")
        #expect(object["uuid"] as? String == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(object["data"] as? String == "AAEC/w==")
        #expect(object["date"] as? String == "2023-11-14T22:13:20.500Z")
        #expect(object["mood"] as? String == "sad")
        #expect((object["inner"] as? [String: Any])?["values"] as? [Double] == [1, 2.5, -3])
        #expect(object["optionalPresent"] as? String == "yes")
        #expect(text.hasPrefix("{\"int\":42,"), "fields keep their order: \(text)")
    }

    @Test func storedRecordsOfEveryCoderRenderAsJSON() async throws {
        let store = try ChronoStore.inMemory()
        try await store.datastore(CounterFormat.self).persist(Counter(id: "a", value: 1))
        try await store.datastore(JSONCounterFormat.self).persist(Counter(id: "a", value: 2))
        #expect(try await store.datastore(JSONCounterFormat.self).load("a")?.value == 2)
        #expect(try await store.datastore(CounterFormat.self).load("a")?.value == 1)
        let binary = RecordEnvelopeProbe.wrap(try ChronoBinaryCoder().encode(Counter(id: "a", value: 1)), coder: 1)
        #expect(try RecordEnvelope.jsonDescription(of: binary) == "{\"version\":1,\"value\":{\"id\":\"a\",\"value\":1}}")
        let json = RecordEnvelopeProbe.wrap(try ValueCoder.json.encode(Counter(id: "a", value: 2)), coder: 2)
        #expect(try RecordEnvelope.jsonDescription(of: json) == "{\"version\":1,\"value\":{\"id\":\"a\",\"value\":2}}")
        let plist = RecordEnvelopeProbe.wrap(try ValueCoder.propertyList.encode(Counter(id: "a", value: 3)), coder: 3)
        #expect(try RecordEnvelope.jsonDescription(of: plist) == "{\"version\":1,\"value\":{\"id\":\"a\",\"value\":3}}")
    }

    @Test func foundationCodersRoundTrip() throws {
        for coder in [ValueCoder.json, .propertyList, .binary] {
            #expect(try coder.decode(Everything.self, from: coder.encode(Self.sample)) == Self.sample)
        }
    }

    @Test func malformedBytesAreATypedErrorNeverATrap() throws {
        let good = try ChronoBinaryCoder().encode(Self.sample)
        for cut in stride(from: 0, to: good.count, by: 7) {
            #expect(throws: (any Error).self) { try ChronoBinaryCoder().decode(Everything.self, from: Array(good[0..<cut])) }
        }
        #expect(throws: ChronoStoreError.self) { try ChronoBinaryCoder.jsonDescription(of: [99]) }
        #expect(throws: ChronoStoreError.self) { try ChronoBinaryCoder.jsonDescription(of: [9, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
        #expect(throws: ChronoStoreError.self) { try ChronoBinaryCoder.jsonDescription(of: [7, 2, 0xC3, 0x28]) }
        #expect(throws: ChronoStoreError.self) { try RecordEnvelope.jsonDescription(of: [42, 1]) }
    }

    @Test func wrongTypesAndOverflowsAreDecodingErrors() throws {
        let coder = ChronoBinaryCoder()
        #expect(throws: DecodingError.self) { try coder.decode(Int8.self, from: coder.encode(300)) }
        #expect(throws: DecodingError.self) { try coder.decode(UInt.self, from: coder.encode(-1)) }
        #expect(throws: DecodingError.self) { try coder.decode(String.self, from: coder.encode(1)) }
        #expect(throws: DecodingError.self) { try coder.decode(Counter.self, from: coder.encode(["id": "x"])) }
    }
}

/// Builds envelopes as the store writes them: coder tag, version 1, payload.
enum RecordEnvelopeProbe {
    static func wrap(_ payload: [UInt8], coder: UInt8) -> [UInt8] { [coder, 1] + payload }
}
