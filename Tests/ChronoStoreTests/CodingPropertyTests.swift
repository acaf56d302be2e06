// Property test: random records of every Codable shape survive each coder bit for bit, directly,
// through a store, and after reopening it; and each coder's documented limits hold.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

enum WideBinaryFormat: DatastoreFormat {
    typealias Instance = WideRecord
    static let name = "wide-binary"
}

enum WideJSONFormat: DatastoreFormat {
    typealias Instance = WideRecord
    static let name = "wide-json"
    static var coder: ValueCoder { .json }
}

enum WidePropertyListFormat: DatastoreFormat {
    typealias Instance = WideRecord
    static let name = "wide-plist"
    static var coder: ValueCoder { .propertyList }
}

@Suite struct CodingPropertyTests {
    /// Cases per coder; `CHRONO_SOAK=1` runs many more.
    static let directCases = Environment.soakEnabled ? 20_000 : 300
    static let storedCases = Environment.soakEnabled ? 2_000 : 60

    static func generators(seed: UInt64) -> [WideRecordGenerator] {
        CoderDomain.all.enumerated().map { index, domain in
            WideRecordGenerator(random: SeededGenerator(seed: seed &+ UInt64(index)), domain: domain)
        }
    }

    @Test func everyCoderRoundTripsRandomRecordsBitForBit() throws {
        let seed = SeededGenerator.seed()
        print("CodingPropertyTests direct seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        for var generator in Self.generators(seed: seed) {
            let coder = generator.domain.coder
            for id in 0..<Self.directCases {
                let record = generator.record(id: id)
                let back = try coder.decode(WideRecord.self, from: coder.encode(record))
                let wrong = record.mismatches(back)
                #expect(wrong.isEmpty, "\(coder) case \(id) differs in \(wrong), seed \(seed)")
                if !wrong.isEmpty { return }
            }
        }
    }

    @Test func recordsComeBackBitForBitFromAStoreAndAfterReopeningIt() async throws {
        let seed = SeededGenerator.seed()
        print("CodingPropertyTests stored seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        let directory = try TemporaryDirectory(prefix: "coding")
        let url = URL(fileURLWithPath: directory.file("wide.chrono"))
        let store = try ChronoStore.create(at: url, options: ChronoStoreOptions(durability: .deferred()))
        var generators = Self.generators(seed: seed)
        var written: [[WideRecord]] = []
        for index in generators.indices {
            let records = (0..<Self.storedCases).map { generators[index].record(id: $0) }
            written.append(records)
            try await Self.persistAndCheck(records, coder: generators[index].domain.coder, in: store, seed: seed)
        }
        try await store.close()

        let reopened = try await ChronoStore.open(at: url, createIfMissing: false)
        let loaded = [
            try await reopened.datastore(WideBinaryFormat.self).loadAll().collect(),
            try await reopened.datastore(WideJSONFormat.self).loadAll().collect(),
            try await reopened.datastore(WidePropertyListFormat.self).loadAll().collect(),
        ]
        for (records, back) in zip(written, loaded) {
            #expect(back.count == records.count)
            for (record, stored) in zip(records, back) {
                let wrong = record.mismatches(stored)
                #expect(wrong.isEmpty, "after reopening, record \(record.id) differs in \(wrong), seed \(seed)")
            }
        }
        try await reopened.close()
    }

    static func persistAndCheck(_ records: [WideRecord], coder: ValueCoder, in store: ChronoStore, seed: UInt64) async throws {
        for record in records {
            let back: WideRecord?
            switch coder {
            case .binary: back = try await persistAndLoad(record, store.datastore(WideBinaryFormat.self))
            case .json: back = try await persistAndLoad(record, store.datastore(WideJSONFormat.self))
            case .propertyList: back = try await persistAndLoad(record, store.datastore(WidePropertyListFormat.self))
            }
            let wrong = try #require(back).mismatches(record)
            #expect(wrong.isEmpty, "\(coder) record \(record.id) differs in \(wrong), seed \(seed)")
        }
    }

    static func persistAndLoad<Format>(_ record: WideRecord, _ datastore: Datastore<Format>) async throws -> WideRecord?
    where Format.Instance == WideRecord, Format.Identifier == Int {
        try await datastore.persist(record)
        return try await datastore.load(record.id)
    }

    // MARK: - The limits KeysAndCoding.md lists

    struct Box<Value: Codable & Sendable>: Codable, Sendable { var value: Value }

    @Test func propertyListsTurnEveryNaNIntoTheQuietNaN() throws {
        let coder = ValueCoder.propertyList
        let double = try coder.decode(Box<Double>.self, from: coder.encode(Box(value: Double(bitPattern: 0xfff4_0000_0000_0001))))
        #expect(double.value.bitPattern == Double.nan.bitPattern)
        let float = try coder.decode(Box<Float>.self, from: coder.encode(Box(value: Float(bitPattern: 0x7fa0_0000))))
        #expect(float.value.bitPattern == Float.nan.bitPattern)
    }

    @Test func propertyListsStoreEqualZerosAndCanonicallyEqualStringsOnce() throws {
        let coder = ValueCoder.propertyList
        let back = try coder.decode(Box<[Double]>.self, from: coder.encode(Box(value: [-0.0, 0.0]))).value
        #expect(back.map(\.sign) == [.minus, .minus])
        let strings = try coder.decode(Box<[String]>.self, from: coder.encode(Box(value: ["e\u{301}", "é"]))).value
        #expect(strings.map(\.unicodeScalars.count) == [2, 2])
    }

    @Test func jsonRefusesNonFiniteNumbersAndKeepsOnlyAbsoluteURLs() throws {
        let coder = ValueCoder.json
        #expect(throws: EncodingError.self) { try coder.encode(Box(value: Double.nan)) }
        #expect(throws: EncodingError.self) { try coder.encode(Box(value: Float.infinity)) }
        let relative = URL(string: "b/c", relativeTo: URL(string: "https://example.com/a/"))!
        let back = try coder.decode(Box<URL>.self, from: coder.encode(Box(value: relative))).value
        #expect(back.baseURL == nil && back.absoluteString == "https://example.com/a/b/c")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    struct Wide: Codable, Equatable, Sendable {
        var signed: [Int128]
        var unsigned: [UInt128]
        var pair: [String: Int128]
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func binaryAndJSONCodersCarry128BitIntegersAndPropertyListsRefuseThem() throws {
        let seed = SeededGenerator.seed()
        print("CodingPropertyTests 128-bit seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        func signed() -> Int128 {
            let extremes: [Int128] = [.min, .max, 0, -1, Int128(Int64.min) - 1, Int128(Int64.max) + 1, Int128(Int64.min)]
            return random.next() % 2 == 0
                ? extremes[Int(random.next() % 7)] : Int128(Int64(bitPattern: random.next())) << 64 | Int128(random.next())
        }
        func unsigned() -> UInt128 {
            let extremes: [UInt128] = [.max, 0, UInt128(UInt64.max), UInt128(UInt64.max) + 1]
            return random.next() % 2 == 0 ? extremes[Int(random.next() % 4)] : UInt128(random.next()) << 64 | UInt128(random.next())
        }
        for _ in 0..<Self.directCases {
            let wide = Wide(signed: (0..<3).map { _ in signed() }, unsigned: (0..<3).map { _ in unsigned() }, pair: ["k": signed()])
            for coder in [ValueCoder.binary, .json] {
                #expect(try coder.decode(Wide.self, from: coder.encode(wide)) == wide, "\(coder) \(wide), seed \(seed)")
            }
            // Rendered as JSON numbers, digit for digit.
            let numbers = wide.signed + wide.unsigned.map { Int128(truncatingIfNeeded: $0) }
            let json = try ChronoBinaryCoder.jsonDescription(of: ChronoBinaryCoder().encode(numbers))
            #expect(json == "[" + numbers.map(String.init).joined(separator: ",") + "]")
        }
        #expect(try ChronoBinaryCoder.jsonDescription(of: ChronoBinaryCoder().encode([UInt128.max])) == "[\(UInt128.max)]")
        // Too wide for the type asked for: a DecodingError, never a trap.
        let coder = ChronoBinaryCoder()
        #expect(throws: DecodingError.self) { try coder.decode(Int64.self, from: coder.encode(Int128(Int64.max) + 1)) }
        #expect(throws: DecodingError.self) { try coder.decode(Int128.self, from: coder.encode(UInt128.max)) }
        #expect(throws: DecodingError.self) { try coder.decode(UInt128.self, from: coder.encode(Int128.min)) }
        #expect(try coder.decode(UInt128.self, from: coder.encode(Int128.max)) == UInt128(Int128.max))
        #expect(throws: EncodingError.self) { try ValueCoder.propertyList.encode(Box(value: Int128.max)) }
    }

    @Test func noCoderTellsANestedNilFromNil() throws {
        // Codable itself writes Optional(Optional.none) as nil: no coder can keep it.
        for coder in [ValueCoder.binary, .json, .propertyList] {
            let nested: Int?? = .some(nil)
            let back = try coder.decode(Box<Int??>.self, from: coder.encode(Box(value: nested))).value
            #expect(back == nil, "\(coder)")
        }
    }
}
