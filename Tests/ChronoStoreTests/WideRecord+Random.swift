// Random WideRecords at the edges of every type, limited to what a given coder claims to keep.
import ChronoStore
import ChronoStoreTestSupport
import Foundation

/// What a coder carries exactly; the generator draws only such values (KeysAndCoding.md lists
/// the same limits, and CodingPropertyTests checks each one).
struct CoderDomain: Sendable {
    var coder: ValueCoder
    /// NaN and infinity (JSON's default strategy refuses to encode them).
    var nonFinite: Bool
    /// NaNs keep their sign, payload and signalling bit (property lists make every NaN the quiet NaN).
    var nanPayloads: Bool
    /// −0.0 and 0.0 in one record each keep their sign (a binary property list stores equal
    /// values once, so the first of them stands for both).
    var signedZeros: Bool
    /// Canonically equal strings in one record keep their own normal forms (a binary property
    /// list stores equal strings once, and Swift's `==` equates "é" with "e\u{301}").
    var normalForms: Bool
    /// URLs relative to a base keep the base (JSON stores only the absolute string).
    var relativeURLs: Bool

    static let binary = CoderDomain(
        coder: .binary, nonFinite: true, nanPayloads: true, signedZeros: true, normalForms: true, relativeURLs: true)
    static let json = CoderDomain(
        coder: .json, nonFinite: false, nanPayloads: false, signedZeros: true, normalForms: true, relativeURLs: false)
    static let propertyList = CoderDomain(
        coder: .propertyList, nonFinite: true, nanPayloads: false, signedZeros: false, normalForms: false, relativeURLs: true)
    static let all = [binary, json, propertyList]
}

struct WideRecordGenerator {
    var random: SeededGenerator
    let domain: CoderDomain

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }

    mutating func record(id: Int) -> WideRecord {
        WideRecord(
            id: id, int: integer(), int8: integer(), int16: integer(), int32: integer(), int64: integer(),
            uint: integer(), uint8: integer(), uint16: integer(), uint32: integer(), uint64: integer(),
            float: float(), double: double(), floats: list { $0.float() },
            doubles: Dictionary(uniqueKeysWithValues: (0..<below(4)).map { ("k\($0)\(text())", list { $0.double() }) }),
            decimal: decimal(), date: date(), dates: list { $0.chance(3) ? nil : $0.date() }, uuid: uuid(), url: url(),
            data: Data(random.bytes(below(40))), text: text(), texts: list { $0.text() },
            nested: list { $0.list { $0.integer() } },
            byNumber: Dictionary(uniqueKeysWithValues: (0..<below(4)).map { (Int(bitPattern: UInt(random.next())) &+ $0, "v\($0)") }),
            byUUID: Dictionary(uniqueKeysWithValues: (0..<below(3)).map { _ in (uuid(), chance(2)) }),
            optional: chance(2) ? nil : text(), payload: payload(), payloads: list { $0.payload() },
            car: Car(built: date(), mass: double(), wheels: integer(), readings: list { $0.float() }))
    }

    mutating func list<Element>(_ make: (inout Self) -> Element) -> [Element] {
        (0..<below(5)).map { _ in make(&self) }
    }

    /// An extreme (min, max, 0, ±1) half the time, else any bit pattern.
    mutating func integer<Value: FixedWidthInteger>() -> Value {
        let extremes: [Value] = [.min, .max, 0, 1, Value.min == 0 ? 2 : -1]
        return chance(2) ? extremes[below(extremes.count)] : Value(truncatingIfNeeded: random.next())
    }

    mutating func double() -> Double {
        let specials: [Double] = [
            -0.0, 0, .leastNonzeroMagnitude, -.leastNormalMagnitude / 3, .greatestFiniteMagnitude, -.ulpOfOne, 0.1,
            .infinity, -.infinity, Double(bitPattern: 0x7ff4_0000_0000_0001), Double(bitPattern: 0xfff8_0000_dead_beef), .nan,
        ]
        let value = chance(2) ? specials[below(specials.count)] : Double(bitPattern: random.next())
        return fit(value, finite: Double(Int64(truncatingIfNeeded: random.next())) / 1024, quietNaN: .nan)
    }

    mutating func float() -> Float {
        let specials: [Float] = [
            -0.0, 0, .leastNonzeroMagnitude, .leastNormalMagnitude / 5, .greatestFiniteMagnitude, 0.1, .infinity,
            -.infinity, Float(bitPattern: 0x7fa0_0000), Float(bitPattern: 0xffc0_1234), .nan,
        ]
        let value = chance(2) ? specials[below(specials.count)] : Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
        return fit(value, finite: Float(Int32(truncatingIfNeeded: random.next())) / 64, quietNaN: .nan)
    }

    /// `value` if the domain carries it, else `finite` (no non-finite values), the quiet NaN or +0.
    private func fit<Value: BinaryFloatingPoint>(_ value: Value, finite: Value, quietNaN: Value) -> Value {
        if !value.isFinite && !domain.nonFinite { return finite }
        if value.isNaN && !domain.nanPayloads { return quietNaN }
        if value == 0 && !domain.signedZeros { return 0 }
        return value
    }

    mutating func decimal() -> Decimal {
        if domain.nonFinite && chance(10) { return .nan }
        let digits = String((0..<(1 + below(38))).map { _ in Character(String(below(10))) })
        let point = below(digits.count + 1)
        let text = (chance(2) ? "-" : "") + digits.prefix(point) + "." + digits.dropFirst(point) + "0"
        return Decimal(string: text) ?? 0
    }

    /// Dates at any magnitude, with fractional seconds down to the last bit.
    mutating func date() -> Date {
        switch below(4) {
        case 0: return [Date.distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0.1)][below(3)]
        case 1: return Date(timeIntervalSinceReferenceDate: Double(Int32(truncatingIfNeeded: random.next())) / 7)
        default:
            let seconds = Double(bitPattern: random.next() & 0x41ef_ffff_ffff_ffff)  // any magnitude below 2^32 s
            return Date(timeIntervalSinceReferenceDate: fit(chance(2) ? -seconds : seconds, finite: 0, quietNaN: .nan))
        }
    }

    mutating func uuid() -> UUID {
        let b = random.bytes(16)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    mutating func url() -> URL {
        let word = "p\(below(1000))"
        switch below(domain.relativeURLs ? 5 : 4) {
        case 0: return URL(string: "https://example.com/\(word)?q=\(below(9))&r=%20#frag")!
        case 1: return URL(string: "file:///tmp/a%20b/\(word).txt")!
        case 2: return URL(string: "mailto:\(word)@example.org")!
        case 3: return URL(string: "urn:isbn:\(below(99999))")!
        default: return URL(string: "\(word)/b?c=d", relativeTo: URL(string: "https://example.com/base/"))!
        }
    }

    /// NULs, emoji, both Unicode normal forms, controls, quotes and noncharacters.
    mutating func text() -> String {
        let decomposed = domain.normalForms ? ["e\u{301}", "A\u{30A}"] : []
        let composed = ["a", "\0", "😀", "👩‍👩‍👧", "é", "\u{FFFF}", "\u{10FFFF}", "\n", "\"", "\\", "日本", " ", "Å"]
        let pieces = composed + decomposed
        return (0..<below(8)).map { _ in pieces[below(pieces.count)] }.joined()
    }

    mutating func payload() -> Payload {
        switch below(4) {
        case 0: return .empty
        case 1: return .number(integer())
        case 2: return .pair(text(), date())
        default: return .labeled(x: double(), tags: list { $0.text() })
        }
    }
}
