// Regression tests for the binary coder's exactness: Date, superEncoder, signalling NaN Floats,
// records written before the Date fix, and index entries for values that do not survive a coder.
import ChronoStore
import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// A base class and a subclass coded through `superEncoder()`, the standard inheritance pattern.
class Shape: Codable, @unchecked Sendable {  // immutable after init
    let name: String
    init(name: String) { self.name = name }
}

final class Circle: Shape, @unchecked Sendable {  // immutable after init
    let radius: Double
    enum CodingKeys: String, CodingKey { case radius }

    init(name: String, radius: Double) {
        self.radius = radius
        super.init(name: name)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        radius = try container.decode(Double.self, forKey: .radius)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(radius, forKey: .radius)
        try super.encode(to: container.superEncoder())
    }
}

/// Uses `superEncoder(forKey:)` and the unkeyed container's `superEncoder()`.
struct SuperUser: Codable, Equatable {
    var keyed: String
    var listed: Int
    enum CodingKeys: String, CodingKey { case base, list }

    init(keyed: String, listed: Int) {
        self.keyed = keyed
        self.listed = listed
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keyed = try container.superDecoder(forKey: .base).singleValueContainer().decode(String.self)
        var list = try container.nestedUnkeyedContainer(forKey: .list)
        listed = try list.superDecoder().singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var base = container.superEncoder(forKey: .base).singleValueContainer()
        try base.encode(keyed)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        var element = list.superEncoder().singleValueContainer()
        try element.encode(listed)
    }
}

struct Appointment: Codable, Sendable, Equatable {
    var id: Date
    var start: Date
}

enum AppointmentFormat: DatastoreFormat {
    typealias Instance = Appointment
    typealias Identifier = Date
    static let name = "appointments"
    static func identifier(of instance: Appointment) -> Date { instance.id }
    static let start = DatastoreIndex<Self, Date>.oneToOne("start", \.start)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(start)] }
}

/// A price its own `Codable` conformance rounds to whole cents: a value that does not survive
/// its coder, as any app's custom conformance may do.
struct Price: Codable, Sendable, Equatable {
    var id: Int
    var amount: Double

    init(id: Int, amount: Double) {
        self.id = id
        self.amount = amount
    }

    enum CodingKeys: String, CodingKey { case id, cents }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        amount = Double(try container.decode(Int64.self, forKey: .cents)) / 100
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(Int64((amount * 100).rounded()), forKey: .cents)
    }
}

enum PriceFormat: DatastoreFormat {
    typealias Instance = Price
    typealias Identifier = Int
    static let name = "prices"
    static func identifier(of instance: Price) -> Int { instance.id }
    static let amount = DatastoreIndex<Self, Double>.oneToMany("amount", \.amount)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(amount)] }
}

struct Visit: Codable, Sendable, Equatable, Identifiable {
    var id: Int
    var when: Date
}

enum VisitFormat: DatastoreFormat {
    typealias Instance = Visit
    static let name = "visits"
}

@Suite struct BinaryCoderExactnessTests {
    let coder = ChronoBinaryCoder()

    @Test func datesRoundTripBitForBit() throws {
        let dates = [
            Date(timeIntervalSinceReferenceDate: 0.1), Date(timeIntervalSinceReferenceDate: 785_000_000.001237),
            Date(timeIntervalSinceReferenceDate: -1e12 + 0.3), Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude),
            Date(timeIntervalSinceReferenceDate: -0.0), Date.distantFuture, Date.distantPast,
        ]
        for date in dates {
            let back = try coder.decode(Date.self, from: coder.encode(date))
            #expect(back.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern, "\(date)")
        }
    }

    @Test func datesWrittenBeforeTheFixStillDecodeAsTheyDid() throws {
        // Tag 11 (the old encoding): a Double of seconds since 1970, little-endian.
        let since1970 = 1_700_000_000.123456
        let old: [UInt8] = [11] + withUnsafeBytes(of: since1970.bitPattern.littleEndian) { Array($0) }
        #expect(try coder.decode(Date.self, from: old) == Date(timeIntervalSince1970: since1970))
        // Inside a record, and through the store's envelope and JSON rendering.
        let record: [UInt8] = [10, 1, 4] + Array("when".utf8) + old
        struct Holder: Codable { var when: Date }
        #expect(try coder.decode(Holder.self, from: record).when == Date(timeIntervalSince1970: since1970))
        #expect(try ChronoBinaryCoder.jsonDescription(of: record) == "{\"when\":\"2023-11-14T22:13:20.123Z\"}")
        // New records use tag 13 and the Date's own Double.
        let new = try coder.encode(Date(timeIntervalSinceReferenceDate: 0.1))
        #expect(new == [13] + withUnsafeBytes(of: (0.1).bitPattern.littleEndian) { Array($0) })
    }

    @Test func superEncoderWorksOnKeyedAndUnkeyedContainers() throws {
        let circle = Circle(name: "dot", radius: 2.5)
        let back = try coder.decode(Circle.self, from: coder.encode(circle))
        #expect(back.name == "dot" && back.radius == 2.5)
        // As Foundation's coders do, the superclass lands in a "super" field.
        #expect(try ChronoBinaryCoder.jsonDescription(of: coder.encode(circle)) == "{\"radius\":2.5,\"super\":{\"name\":\"dot\"}}")
        let user = SuperUser(keyed: "k", listed: 7)
        #expect(try coder.decode(SuperUser.self, from: coder.encode(user)) == user)
        #expect(try ChronoBinaryCoder.jsonDescription(of: coder.encode(user)) == "{\"base\":\"k\",\"list\":[7]}")
    }

    @Test func signallingNaNFloatsKeepTheirBits() throws {
        for bits: UInt32 in [0x7fa0_0000, 0xffa0_0001, 0x7fc0_1234, 0x8000_0000, 0x0000_0001] {
            let value = Float(bitPattern: bits)
            #expect(try coder.decode(Float.self, from: coder.encode(value)).bitPattern == bits)
            #expect(try coder.decode([Float].self, from: coder.encode([value]))[0].bitPattern == bits)
            #expect(try coder.decode([String: Float].self, from: coder.encode(["f": value]))["f"]?.bitPattern == bits)
        }
        for bits: UInt64 in [0x7ff4_0000_0000_0001, 0xfff8_0000_dead_beef, 0x8000_0000_0000_0000] {
            #expect(try coder.decode(Double.self, from: coder.encode(Double(bitPattern: bits))).bitPattern == bits)
        }
    }

    @Test func dateIdentifiersAndUniqueDateIndexesWorkAfterALoad() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let appointments = store.datastore(AppointmentFormat.self)
        let first = Appointment(
            id: Date(timeIntervalSinceReferenceDate: 0.1), start: Date(timeIntervalSinceReferenceDate: 785_000_000.001237))
        try await appointments.persist(first)
        let loaded = try #require(try await appointments.load(first.id))
        #expect(loaded == first)
        var edited = loaded
        edited.start = edited.start.addingTimeInterval(0.5)
        try await appointments.persist(edited)  // no false unique conflict with its own old entry
        try await appointments.persist(Appointment(id: Date(timeIntervalSinceReferenceDate: 7), start: loaded.start))
        #expect(try await appointments.load(AppointmentFormat.start, in: .all).collect().count == 2)
        try await appointments.delete(loaded.id)
        #expect(try await appointments.count() == 1)
    }

    @Test func indexEntriesFollowTheStoredValueNotTheInstanceInHand() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let prices = store.datastore(PriceFormat.self)
        try await prices.persist(Price(id: 1, amount: 0.104))  // stored, and loaded, as 0.10
        try await prices.persist(Price(id: 1, amount: 2))
        #expect(try await prices.load(PriceFormat.amount, in: .all).collect() == [Price(id: 1, amount: 2)])
        try await prices.persist(Price(id: 2, amount: 3.333))
        try await prices.delete(2)
        #expect(try await prices.load(PriceFormat.amount, in: .all).collect().map(\.id) == [1])
        #expect(try await prices.load(PriceFormat.amount, equalTo: 0.1).collect().isEmpty)
    }

    @Test func aStoreHoldingRecordsOfTheOldDateTagLoadsThemAndRewritesThemExactly() async throws {
        // A record as earlier versions stored it: envelope (binary coder, version 1), then an
        // object whose Date field has tag 11 (seconds since 1970).
        let directory = try TemporaryDirectory(prefix: "legacy")
        let path = directory.file("legacy.chrono")
        let since1970 = 1_785_000_000.001237
        var payload: [UInt8] = [10, 2, 2] + Array("id".utf8) + [3, 2]  // "id": 1 (zig-zag 2)
        payload += [4] + Array("when".utf8) + [11] + withUnsafeBytes(of: since1970.bitPattern.littleEndian) { Array($0) }
        let engine = try Store.create(at: path)
        try engine.write { try $0.put(1.orderedKeyBytes, [1, 1] + payload, in: VisitFormat.name) }
        try engine.close()

        let store = try await ChronoStore.open(at: URL(fileURLWithPath: path), createIfMissing: false)
        let visits = store.datastore(VisitFormat.self)
        let old = try #require(try await visits.load(1))
        #expect(old.when == Date(timeIntervalSince1970: since1970))
        let exact = Date(timeIntervalSinceReferenceDate: 785_000_000.001237)
        try await visits.persist(Visit(id: 1, when: exact))
        try await store.close()
        let reopened = try await ChronoStore.open(at: URL(fileURLWithPath: path), createIfMissing: false)
        let loaded = try #require(try await reopened.datastore(VisitFormat.self).load(1))
        #expect(loaded.when.timeIntervalSinceReferenceDate.bitPattern == exact.timeIntervalSinceReferenceDate.bitPattern)
        try await reopened.close()
    }
}
