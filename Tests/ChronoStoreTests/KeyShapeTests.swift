// Identifier shapes: keys decode to the values that wrote them, and encode back to the same bytes.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct KeyShapeTests {
    /// Encodes random values of one type, decodes them by shape, and re-encodes the decoded value.
    func checkRoundTrip<Key: OrderedKey>(
        _ type: Key.Type, expected text: String, count: Int = 500, _ make: (inout SeededGenerator) -> Key
    ) throws {
        let shape = try #require(KeyShape.of(Key.self))
        #expect(shape.text == text)
        #expect(KeyShape(text: text) == shape)
        let seed = SeededGenerator.seed()
        print("KeyShapeTests \(text) seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<count {
            let key = make(&generator)
            let bytes = key.orderedKeyBytes
            let value = try #require(shape.decode(bytes), "\(text): \(key) did not decode, seed \(seed)")
            #expect(shape.encode(value) == bytes, "\(text): \(key) decoded as \(value), seed \(seed)")
            #expect(shape.decode(bytes + [0]) == nil, "a trailing byte is not a key of this shape")
        }
    }

    @Test func everyBuiltInKeyTypeRoundTripsThroughItsShape() throws {
        try checkRoundTrip(Int.self, expected: "int64") { Int.random(in: .min ... .max, using: &$0) }
        try checkRoundTrip(Int16.self, expected: "int16") { Int16.random(in: .min ... .max, using: &$0) }
        try checkRoundTrip(UInt8.self, expected: "uint8") { UInt8.random(in: .min ... .max, using: &$0) }
        try checkRoundTrip(UInt32.self, expected: "uint32") { UInt32.random(in: .min ... .max, using: &$0) }
        try checkRoundTrip(Double.self, expected: "double") { Double(bitPattern: $0.next()) }
        try checkRoundTrip(Float.self, expected: "float") { Float(bitPattern: UInt32.random(in: 0 ... .max, using: &$0)) }
        try checkRoundTrip(Bool.self, expected: "bool") { Bool.random(using: &$0) }
        try checkRoundTrip(String.self, expected: "string") { generator in
            String((0..<Int.random(in: 0...12, using: &generator)).map { _ in
                ["a", "\0", "é", "\u{1F600}", "\t", "z"].randomElement(using: &generator)!
            })
        }
        try checkRoundTrip(UUID.self, expected: "uuid") { _ in UUID() }
        try checkRoundTrip(Date.self, expected: "date") { Date(timeIntervalSinceReferenceDate: Double.random(in: -1e10...1e10, using: &$0)) }
        try checkRoundTrip(Int?.self, expected: "optional(int64)") { generator in
            Bool.random(using: &generator) ? nil : Int.random(in: -5...5, using: &generator)
        }
        try checkRoundTrip(KeyTuple3<String, Int32, UUID>.self, expected: "tuple(string,int32,uuid)") { generator in
            KeyTuple3("k\(Int.random(in: 0...99, using: &generator))", Int32.random(in: -9...9, using: &generator), UUID())
        }
    }

    @Test func anAppDefinedKeyTypeHasNoShape() {
        struct Custom: OrderedKey { func appendOrderedKey(to encoder: inout OrderedKeyEncoder) { encoder.append(1) } }
        #expect(KeyShape.of(Custom.self) == nil)
        #expect(KeyShape.of(KeyTuple2<Custom, Int>.self) == nil)
        #expect(KeyShape(text: "tuple(string)") == nil)
        #expect(KeyShape(text: "int7") == nil)
    }

    @Test func identifiersShowAsJSONWithExactDates() {
        #expect(KeyValue.tuple([.string("a\"b"), .signed(-3), .null]).jsonText == #"["a\"b",-3,null]"#)
        let exact = Date(timeIntervalSinceReferenceDate: 0.5).timeIntervalSinceReferenceDate
        #expect(KeyValue.date(exact).jsonText == #""2001-01-01T00:00:00.500Z""#)
        let inexact = 785_000_000.001237
        #expect(KeyValue.date(inexact).jsonText.contains("\"sinceReferenceDate\":785000000.001237"))
    }
}
