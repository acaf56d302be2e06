// Property tests: the byte order of encoded keys equals Swift's order, for every key type.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct OrderedKeyTests {
    /// Checks that for random pairs, `<` and `==` agree with the encodings' byte order.
    func checkOrder<Value: OrderedKey & Comparable>(
        _ name: String, count: Int = 2000, _ make: (inout SeededGenerator) -> Value
    ) {
        let seed = SeededGenerator.seed()
        print("OrderedKeyTests \(name) seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<count {
            let a = make(&generator)
            let b = make(&generator)
            let (ka, kb) = (a.orderedKeyBytes, b.orderedKeyBytes)
            #expect((a < b) == ka.lexicographicallyPrecedes(kb), "\(name): \(a) vs \(b), bytes \(ka) vs \(kb), seed \(seed)")
            #expect((a == b) == (ka == kb), "\(name): \(a) vs \(b), seed \(seed)")
        }
    }

    /// Picks from a few edge values half of the time, else a uniformly random value.
    static func integer<Value: FixedWidthInteger>(_ generator: inout SeededGenerator) -> Value {
        let edges: [Value] = [.min, .max, 0, 1, Value.min &+ 1, Value.max &- 1, Value(truncatingIfNeeded: -1)]
        if Bool.random(using: &generator) { return edges.randomElement(using: &generator)! }
        return Value(truncatingIfNeeded: generator.next())
    }

    @Test func signedIntegersSortLikeSwift() {
        checkOrder("Int") { (g: inout SeededGenerator) -> Int in Self.integer(&g) }
        checkOrder("Int8") { (g: inout SeededGenerator) -> Int8 in Self.integer(&g) }
        checkOrder("Int16") { (g: inout SeededGenerator) -> Int16 in Self.integer(&g) }
        checkOrder("Int32") { (g: inout SeededGenerator) -> Int32 in Self.integer(&g) }
        checkOrder("Int64") { (g: inout SeededGenerator) -> Int64 in Self.integer(&g) }
    }

    @Test func unsignedIntegersSortLikeSwift() {
        checkOrder("UInt") { (g: inout SeededGenerator) -> UInt in Self.integer(&g) }
        checkOrder("UInt8") { (g: inout SeededGenerator) -> UInt8 in Self.integer(&g) }
        checkOrder("UInt16") { (g: inout SeededGenerator) -> UInt16 in Self.integer(&g) }
        checkOrder("UInt32") { (g: inout SeededGenerator) -> UInt32 in Self.integer(&g) }
        checkOrder("UInt64") { (g: inout SeededGenerator) -> UInt64 in Self.integer(&g) }
    }

    static func double(_ generator: inout SeededGenerator) -> Double {
        let edges: [Double] = [0, -0.0, 1, -1, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, 0.1, -0.1]
        switch generator.next() % 3 {
        case 0: return edges.randomElement(using: &generator)!
        case 1: return Double.random(in: -1000...1000, using: &generator)
        default:
            let value = Double(bitPattern: generator.next())
            return value.isNaN ? 42 : value
        }
    }

    @Test func doublesSortLikeSwiftIncludingNegativesAndZeros() {
        checkOrder("Double") { Self.double(&$0) }
        checkOrder("Float") { Float(Self.double(&$0)) }
    }

    @Test func nanSortsAfterInfinityAndAllNaNsEncodeAlike() {
        let nan = Double.nan.orderedKeyBytes
        #expect(Double.infinity.orderedKeyBytes.lexicographicallyPrecedes(nan))
        #expect(Double(bitPattern: 0x7FF0_0000_0000_0001).orderedKeyBytes == nan)
        #expect((-Double.nan).orderedKeyBytes == nan)
        #expect(Float.infinity.orderedKeyBytes.lexicographicallyPrecedes(Float.nan.orderedKeyBytes))
        #expect((-0.0 as Double).orderedKeyBytes == (0.0 as Double).orderedKeyBytes)
    }

    static func string(_ generator: inout SeededGenerator) -> String {
        // ASCII, NUL, Latin, combining marks, CJK, emoji: exercise escaping and normalization.
        let pieces = ["a", "b", "z", "A", "\0", "\u{1}", " ", "é", "e\u{301}", "\u{301}", "ß", "日", "本", "😀", "\u{FFFF}", "ñ", "n\u{303}"]
        let length = Int(generator.next() % 6)
        return (0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    /// A random string in NFC. Swift's `<` is not a strict weak order on mixed-normalization
    /// strings where one is a canonical prefix of the other (`"e\u{301}a" < "éaa"` and its
    /// converse are both false); the key order is Unicode canonical order, which `<` gives on NFC.
    static func nfcString(_ generator: inout SeededGenerator) -> String {
        string(&generator).precomposedStringWithCanonicalMapping
    }

    @Test func stringsSortLikeSwiftWithNulAndCanonicalEquivalence() {
        checkOrder("String", count: 5000) { Self.nfcString(&$0) }
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            let raw = Self.string(&generator)
            #expect(raw.orderedKeyBytes == raw.precomposedStringWithCanonicalMapping.orderedKeyBytes, "\(raw.unicodeScalars.map(\.value))")
        }
        #expect("é".orderedKeyBytes == "e\u{301}".orderedKeyBytes)
        #expect("a".orderedKeyBytes.lexicographicallyPrecedes("a\0".orderedKeyBytes))
        #expect("a\0".orderedKeyBytes.lexicographicallyPrecedes("ab".orderedKeyBytes))
        #expect("".orderedKeyBytes.lexicographicallyPrecedes("\0".orderedKeyBytes))
    }

    @Test func uuidsSortByTheirText() {
        let seed = SeededGenerator.seed()
        print("OrderedKeyTests UUID seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<1000 {
            let bytes = generator.bytes(32)
            let a = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            let b = UUID(uuid: (bytes[16], bytes[17], bytes[18], bytes[19], bytes[20], bytes[21], bytes[22], bytes[23],
                bytes[24], bytes[25], bytes[26], bytes[27], bytes[28], bytes[29], bytes[30], bytes[31]))
            #expect((a.uuidString < b.uuidString) == a.orderedKeyBytes.lexicographicallyPrecedes(b.orderedKeyBytes))
        }
    }

    @Test func datesBoolsAndOptionalsSortLikeSwift() {
        checkOrder("Date") { Date(timeIntervalSince1970: Double.random(in: -1e10...1e10, using: &$0)) }
        #expect(false.orderedKeyBytes.lexicographicallyPrecedes(true.orderedKeyBytes))
        checkOrder("Optional<Int>") { (g: inout SeededGenerator) -> OptionalKey<Int> in
            OptionalKey(g.next() % 4 == 0 ? nil : Int(truncatingIfNeeded: g.next() % 100) - 50)
        }
    }

    @Test func compositeKeysSortLexicographically() {
        checkOrder("KeyTuple2<String, Int>", count: 5000) { (g: inout SeededGenerator) in
            KeyTuple2(Self.nfcString(&g), Int(truncatingIfNeeded: g.next() % 7) - 3)
        }
        checkOrder("KeyTuple3<Int16, String, Double>", count: 5000) { (g: inout SeededGenerator) in
            KeyTuple3(Int16(truncatingIfNeeded: g.next() % 3), Self.nfcString(&g), Self.double(&g))
        }
        checkOrder("KeyTuple4<Int8, UInt8, String, Int>", count: 3000) { (g: inout SeededGenerator) in
            KeyTuple4(Int8(truncatingIfNeeded: g.next() % 2), UInt8(truncatingIfNeeded: g.next() % 3), Self.nfcString(&g), Int(truncatingIfNeeded: g.next()))
        }
    }
}

/// Optional is not Comparable; this orders nil first, as the key encoding does.
struct OptionalKey<Wrapped: OrderedKey & Comparable>: OrderedKey, Comparable, CustomStringConvertible {
    var value: Wrapped?
    init(_ value: Wrapped?) { self.value = value }
    func appendOrderedKey(to encoder: inout OrderedKeyEncoder) { encoder.append(key: value) }
    static func < (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.value, rhs.value) {
        case (nil, nil): false
        case (nil, _): true
        case (_, nil): false
        case (let a?, let b?): a < b
        }
    }
    var description: String { value.map { "\($0)" } ?? "nil" }
}
