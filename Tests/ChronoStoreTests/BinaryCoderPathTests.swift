// Regression tests for the binary coder's faster paths: integers through their own container
// requirements, coding paths built only for errors, field names and values checked as ASCII before
// any UTF-8 comparison, and bytes written straight from the encoder's boxes.
import ChronoStore
import Foundation
import Testing

private struct Pair: Codable, Equatable {
    var a: Int
    var b: String
}

private struct Empty: Codable, Equatable {}

private struct Widths: Codable, Equatable {
    var small: Int8
    var list: [UInt16]
    var wrapped: Wrapper<Int32>
}

/// A generic wrapper: its field is decoded through the generic requirement, not an integer one.
private struct Wrapper<Value: Codable & Equatable>: Codable, Equatable {
    var value: Value
}

/// A list of bytes read element by element through the unkeyed container's `UInt8` requirement
/// (`[UInt8]`'s own decoding goes through the generic one).
private struct ByteList: Codable, Equatable {
    var bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        bytes = []
        while !container.isAtEnd { bytes.append(try container.decode(UInt8.self)) }
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for byte in bytes { try container.encode(byte) }
    }
}

private struct Holder: Codable {
    var x: ByteList
}

/// A single-value type holding an integer.
private struct Level: Codable, Equatable {
    var raw: UInt8
    init(_ raw: UInt8) { self.raw = raw }
    init(from decoder: any Decoder) throws { raw = try decoder.singleValueContainer().decode(UInt8.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(raw)
    }
}

private struct Tagged: Codable, Equatable {
    var when: Date
    var blob: Data
    var id: UUID
    var dates: [Date]
    var wrappedDate: Wrapper<Date>
}

/// Any record whose field `name` holds `text`.
private struct Named: Codable, Equatable {
    var name: String
}

private struct OnlyA: Codable, Equatable {
    var a: Int
}

/// A field named "é" written precomposed (U+00E9) and read decomposed (e + U+0301).
private struct Precomposed: Codable {
    var value: Int
    enum CodingKeys: String, CodingKey { case value = "\u{E9}" }
}

private struct Decomposed: Codable {
    var value: Int
    enum CodingKeys: String, CodingKey { case value = "e\u{301}" }
}

@Suite struct BinaryCoderPathTests {
    let coder = ChronoBinaryCoder()

    @Test func bytesFollowTheFormatTable() throws {
        // Object (10) of 2 fields: "a" signed 1 (zig-zag 2), "b" string "x".
        #expect(try coder.encode(Pair(a: 1, b: "x")) == [10, 2, 1, 97, 3, 2, 1, 98, 7, 1, 120])
        #expect(try coder.encode(Empty()) == [10, 0])
        // Array (9) of 3 unsigned (4) values, and a nested object.
        #expect(try coder.encode([UInt8(1), 2, 200]) == [9, 3, 4, 1, 4, 2, 4, 200, 1])
        #expect(try coder.encode(Wrapper(value: Pair(a: -1, b: ""))) == [10, 1, 5] + Array("value".utf8) + [10, 2, 1, 97, 3, 1, 1, 98, 7, 0])
    }

    @Test func integersOfEveryWidthAndContainerRoundTrip() throws {
        let widths = Widths(small: -128, list: [0, 65535], wrapped: Wrapper(value: .min))
        #expect(try coder.decode(Widths.self, from: coder.encode(widths)) == widths)
        #expect(try coder.decode([Level].self, from: coder.encode([Level(0), Level(255)])) == [Level(0), Level(255)])
        #expect(try coder.decode(Wrapper<UInt64>.self, from: coder.encode(Wrapper(value: UInt64.max))).value == .max)
        #expect(try coder.decode([Int?].self, from: coder.encode([1, nil, 3] as [Int?])) == [1, nil, 3])
    }

    @Test func anIntegerOutOfRangeNamesItsPathInEveryContainer() throws {
        // A record written with wider integers, read as narrower ones.
        struct Wide: Codable {
            var small: Int
            var list: [Int]
            var wrapped: Wrapper<Int>
        }
        func failure(_ wide: Wide) throws -> (DecodingError, [String]) {
            do {
                _ = try coder.decode(Widths.self, from: coder.encode(wide))
            } catch let error as DecodingError {
                guard case .dataCorrupted(let context) = error else { return (error, []) }
                return (error, context.codingPath.map(\.stringValue))
            }
            Issue.record("decoding \(wide) did not fail")
            return (DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "")), [])
        }
        #expect(try failure(Wide(small: 128, list: [], wrapped: Wrapper(value: 0))).1 == ["small"])
        #expect(try failure(Wide(small: 0, list: [1, 2, 70_000], wrapped: Wrapper(value: 0))).1 == ["list", "2"])
        #expect(try failure(Wide(small: 0, list: [], wrapped: Wrapper(value: Int(Int32.max) + 1))).1 == ["wrapped", "value"])
        do {
            _ = try coder.decode([Level].self, from: coder.encode([7, 256]))
            Issue.record("256 decoded as UInt8")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["1"])
        }
    }

    @Test func theUnkeyedIntegerRequirementsNameTheElementsPath() throws {
        #expect(try coder.decode(ByteList.self, from: coder.encode(ByteList([1, 2, 255]))) == ByteList([1, 2, 255]))
        do {
            _ = try coder.decode(ByteList.self, from: coder.encode([7, 256]))
            Issue.record("256 decoded as UInt8")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["1"])
        }
        struct WideHolder: Codable { var x: [Int] }
        do {
            _ = try coder.decode(Holder.self, from: coder.encode(WideHolder(x: [0, 300])))
            Issue.record("300 decoded as UInt8")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["x", "1"])
        }
    }

    @Test func aValueOfTheWrongKindNamesItsPath() throws {
        do {
            _ = try coder.decode(Widths.self, from: coder.encode(Named(name: "x")))
            Issue.record("a record without the fields decoded")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "small")
        }
        struct Listed: Codable { var small: Int8; var list: [String]; var wrapped: Wrapper<Int32> }
        do {
            _ = try coder.decode(Widths.self, from: coder.encode(Listed(small: 1, list: ["a", "b"], wrapped: Wrapper(value: 1))))
            Issue.record("strings decoded as integers")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["list", "0"])
            #expect(context.debugDescription == "expected an integer, found a string")
        }
    }

    @Test func datesDataAndUUIDsKeepTheirTagsInEveryContainer() throws {
        let tagged = Tagged(
            when: Date(timeIntervalSinceReferenceDate: 1.0 / 3.0), blob: Data([0, 255, 7]),
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            dates: [Date(timeIntervalSinceReferenceDate: -1e9), Date(timeIntervalSinceReferenceDate: 0.1)],
            wrappedDate: Wrapper(value: Date(timeIntervalSinceReferenceDate: 12.5)))
        let bytes = try coder.encode(tagged)
        #expect(try coder.decode(Tagged.self, from: bytes) == tagged)
        let json = try ChronoBinaryCoder.jsonDescription(of: bytes)
        #expect(json.contains("\"blob\":\"AP8H\""), "\(json)")
        #expect(json.contains("\"id\":\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\""), "\(json)")
        #expect(json.contains("\"wrappedDate\":{\"value\":\"2001-01-01T00:00:12.500Z\"}"), "\(json)")
    }

    @Test func textOfEveryLengthAroundAWordRoundTripsAndInvalidUTF8IsRefused() throws {
        for length in 0...20 {
            let ascii = String(repeating: "k", count: length)
            #expect(try coder.decode(Named.self, from: coder.encode(Named(name: ascii))).name == ascii)
            let accented = String(repeating: "k", count: length) + "é🙂"
            #expect(try coder.decode(Named.self, from: coder.encode(Named(name: accented))).name == accented)
            guard length > 0 else { continue }
            // The value's bytes are the record's last `length`; break each position in turn.
            let valid = try coder.encode(Named(name: ascii))
            for position in 0..<length {
                for bad: UInt8 in [0x80, 0xC3, 0xFF] {
                    var damaged = valid
                    damaged[valid.count - length + position] = bad
                    #expect(throws: ChronoStoreError.self, "byte \(bad) at \(position) of \(length)") {
                        try coder.decode(Named.self, from: damaged)
                    }
                }
            }
        }
        // A field name that is not UTF-8 is refused too (the name "name" starts at byte 3).
        var badName = try coder.encode(Named(name: "v"))
        badName[3] = 0xFE
        #expect(throws: ChronoStoreError.self) { try ChronoBinaryCoder.jsonDescription(of: badName) }
    }

    /// The whole record is checked before any field is read, so a damaged value in a field the
    /// type never reads is still an error; field names match as strings: the first of two equal
    /// names, and canonically equivalent spellings.
    @Test func theWholeRecordIsCheckedAndNamesMatchAsStrings() throws {
        // {"a": 1, "a": 2}: the first "a" is read.
        #expect(try coder.decode(OnlyA.self, from: [10, 2, 1, 97, 3, 2, 1, 97, 3, 4]) == OnlyA(a: 1))
        // {"a": 1, "b": <tag 99>}: the type reads only "a", the record is still refused.
        do {
            _ = try coder.decode(OnlyA.self, from: [10, 2, 1, 97, 3, 2, 1, 98, 99])
            Issue.record("a record with an unknown tag decoded")
        } catch ChronoStoreError.malformedRecord(let reason) {
            #expect(reason == "unknown tag 99 at byte 8")
        }
        do {
            _ = try coder.decode(OnlyA.self, from: [10, 1, 1, 97, 3, 2, 0])
            Issue.record("a record with an extra byte decoded")
        } catch ChronoStoreError.malformedRecord(let reason) {
            #expect(reason == "1 extra bytes after the value")
        }
        #expect(throws: ChronoStoreError.self) { try coder.decode(OnlyA.self, from: [10, 1, 1, 97, 5, 0, 0]) }
        let written = try coder.encode(Precomposed(value: 7))
        #expect(try coder.decode(Decomposed.self, from: written).value == 7)
    }
}
