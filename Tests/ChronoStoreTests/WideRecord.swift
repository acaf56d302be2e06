// A record with every Codable shape, random instances of it, and bit-for-bit comparison.
import ChronoStore
import ChronoStoreTestSupport
import Foundation

/// A base class and subclass joined through `superEncoder()`.
class Vehicle: Codable, @unchecked Sendable {  // immutable after init
    let built: Date
    let mass: Double
    init(built: Date, mass: Double) {
        self.built = built
        self.mass = mass
    }
}

final class Car: Vehicle, @unchecked Sendable {  // immutable after init
    let wheels: UInt8
    let readings: [Float]
    enum CodingKeys: String, CodingKey { case wheels, readings }

    init(built: Date, mass: Double, wheels: UInt8, readings: [Float]) {
        self.wheels = wheels
        self.readings = readings
        super.init(built: built, mass: mass)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        wheels = try container.decode(UInt8.self, forKey: .wheels)
        readings = try container.decode([Float].self, forKey: .readings)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(wheels, forKey: .wheels)
        try container.encode(readings, forKey: .readings)
        try super.encode(to: container.superEncoder())
    }
}

/// An enum with associated values (synthesized Codable).
enum Payload: Codable, Sendable {
    case empty
    case number(Int64)
    case pair(String, Date)
    case labeled(x: Double, tags: [String])
}

struct WideRecord: Codable, Sendable, Identifiable {
    var id: Int
    var int: Int, int8: Int8, int16: Int16, int32: Int32, int64: Int64
    var uint: UInt, uint8: UInt8, uint16: UInt16, uint32: UInt32, uint64: UInt64
    var float: Float, double: Double
    var floats: [Float]
    var doubles: [String: [Double]]
    var decimal: Decimal
    var date: Date
    var dates: [Date?]
    var uuid: UUID
    var url: URL
    var data: Data
    var text: String
    var texts: [String]
    var nested: [[Int16]]
    var byNumber: [Int: String]
    var byUUID: [UUID: Bool]
    var optional: String?
    var payload: Payload
    var payloads: [Payload]
    var car: Car
}

// MARK: - Bit-for-bit comparison

/// Equality that tells apart what `==` does not: float bit patterns (−0, NaN payloads), a Date's
/// exact Double, a string's exact scalars, a URL's base, a Decimal's exponent.
protocol BitExact {
    func isBitExact(_ other: Self) -> Bool
}

extension BitExact where Self: Equatable {
    func isBitExact(_ other: Self) -> Bool { self == other }
}

extension Int: BitExact {}
extension Int8: BitExact {}
extension Int16: BitExact {}
extension Int32: BitExact {}
extension Int64: BitExact {}
extension UInt: BitExact {}
extension UInt8: BitExact {}
extension UInt16: BitExact {}
extension UInt32: BitExact {}
extension UInt64: BitExact {}
extension Bool: BitExact {}
extension UUID: BitExact {}
extension Data: BitExact {}
extension Float: BitExact { func isBitExact(_ other: Float) -> Bool { bitPattern == other.bitPattern } }
extension Double: BitExact { func isBitExact(_ other: Double) -> Bool { bitPattern == other.bitPattern } }
extension String: BitExact { func isBitExact(_ other: String) -> Bool { unicodeScalars.elementsEqual(other.unicodeScalars) } }

extension Date: BitExact {
    func isBitExact(_ other: Date) -> Bool { timeIntervalSinceReferenceDate.isBitExact(other.timeIntervalSinceReferenceDate) }
}

extension URL: BitExact {
    func isBitExact(_ other: URL) -> Bool {
        relativeString.isBitExact(other.relativeString) && baseURL?.absoluteString == other.baseURL?.absoluteString
    }
}

extension Decimal: BitExact {
    func isBitExact(_ other: Decimal) -> Bool {
        if isNaN || other.isNaN { return isNaN && other.isNaN }
        if isZero || other.isZero { return isZero && other.isZero }  // a zero has no sign, and its exponent means nothing
        return exponent == other.exponent && isSignMinus == other.isSignMinus && "\(significand)" == "\(other.significand)"
    }
}

extension Optional: BitExact where Wrapped: BitExact {
    func isBitExact(_ other: Wrapped?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let a?, let b?): a.isBitExact(b)
        default: false
        }
    }
}

extension Array: BitExact where Element: BitExact {
    func isBitExact(_ other: [Element]) -> Bool { count == other.count && zip(self, other).allSatisfy { $0.isBitExact($1) } }
}

extension Dictionary: BitExact where Value: BitExact {
    func isBitExact(_ other: [Key: Value]) -> Bool {
        count == other.count && allSatisfy { key, value in other[key].map(value.isBitExact) ?? false }
    }
}

extension Payload: BitExact {
    func isBitExact(_ other: Payload) -> Bool {
        switch (self, other) {
        case (.empty, .empty): true
        case (.number(let a), .number(let b)): a == b
        case (.pair(let a, let b), .pair(let c, let d)): a.isBitExact(c) && b.isBitExact(d)
        case (.labeled(let a, let b), .labeled(let c, let d)): a.isBitExact(c) && b.isBitExact(d)
        default: false
        }
    }
}

extension Car: BitExact {
    func isBitExact(_ other: Car) -> Bool {
        built.isBitExact(other.built) && mass.isBitExact(other.mass) && wheels == other.wheels && readings.isBitExact(other.readings)
    }
}

extension WideRecord {
    /// The fields that differ from `other`'s, bit for bit, with both values.
    func mismatches(_ other: WideRecord) -> [String] {
        zip(Mirror(reflecting: self).children, Mirror(reflecting: other).children).compactMap { mine, theirs in
            guard let value = mine.value as? any BitExact else { return "\(mine.label ?? "?") (not comparable)" }
            return Self.same(value, theirs.value) ? nil : "\(mine.label ?? "?"): \(mine.value) ≠ \(theirs.value)"
        }
    }

    private static func same<Value: BitExact>(_ value: Value, _ other: Any) -> Bool {
        guard let other = other as? Value else { return false }
        return value.isBitExact(other)
    }
}
