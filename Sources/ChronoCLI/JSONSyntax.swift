// A strict JSON reader (RFC 8259) that keeps each scalar's source text, so values re-emit exactly.

/// A parsed JSON document (explicitly `Sendable`: Swift 6.3 loops inferring it for a recursive
/// enum of tuple arrays). Numbers and strings keep the text they were written with, so
/// ``compactText`` equals the input minus insignificant whitespace: `1.10` stays `1.10` and
/// `"\u00e9"` stays escaped. (Foundation's JSONSerialization would re-serialize numbers.)
enum JSONNode: Sendable {
    case object([(key: String, value: JSONNode)])
    case array([JSONNode])
    /// A string's decoded value and its source text, quotes included.
    case string(String, source: String)
    /// A number, `true`, `false` or `null`, as written.
    case scalar(String)

    /// The document as compact JSON text.
    var compactText: String {
        switch self {
        case .scalar(let text), .string(_, let text): return text
        case .array(let elements): return "[" + elements.map(\.compactText).joined(separator: ",") + "]"
        case .object(let members):
            let fields = members.map { member in
                var key = ""
                JSONValue.writeString(member.key, into: &key)
                return key + ":" + member.value.compactText
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
    }

    /// The members of an object, or nil.
    var members: [(key: String, value: JSONNode)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The decoded value of a string, or nil.
    var stringValue: String? {
        if case .string(let value, _) = self { return value }
        return nil
    }
}

/// Why a text is not JSON, with the character position (from 1) where reading stopped.
struct JSONSyntaxError: Error, CustomStringConvertible {
    var reason: String
    var position: Int
    var description: String { "invalid JSON at character \(position): \(reason)" }
}

/// Parses one JSON document (any value, not only objects and arrays).
struct JSONReader {
    private let bytes: [UInt8]
    private var offset = 0
    private var depth = 0
    private static let maximumDepth = 512

    /// Parses `text`, which must hold exactly one JSON value and optional whitespace.
    /// - Throws: ``JSONSyntaxError``.
    static func parse(_ text: String) throws -> JSONNode {
        var reader = JSONReader(bytes: Array(text.utf8))
        reader.skipWhitespace()
        let node = try reader.readValue()
        reader.skipWhitespace()
        guard reader.offset == reader.bytes.count else { throw reader.error("unexpected text after the value") }
        return node
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ reason: String) -> JSONSyntaxError {
        let position = String(decoding: bytes[..<min(offset, bytes.count)], as: UTF8.self).count + 1
        return JSONSyntaxError(reason: reason, position: position)
    }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard current == byte else { throw error("expected \(what)") }
        offset += 1
    }

    private mutating func readValue() throws -> JSONNode {
        switch current {
        case UInt8(ascii: "{"): return try nested { try $0.readObject() }
        case UInt8(ascii: "["): return try nested { try $0.readArray() }
        case UInt8(ascii: "\""):
            let start = offset
            let value = try readString()
            return .string(value, source: String(decoding: bytes[start..<offset], as: UTF8.self))
        case UInt8(ascii: "t"): return try readLiteral("true")
        case UInt8(ascii: "f"): return try readLiteral("false")
        case UInt8(ascii: "n"): return try readLiteral("null")
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): return try readNumber()
        case nil: throw error("expected a value, found the end of the text")
        default: throw error("expected a value")
        }
    }

    private mutating func nested(_ body: (inout JSONReader) throws -> JSONNode) throws -> JSONNode {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels deep") }
        return try body(&self)
    }

    private mutating func readObject() throws -> JSONNode {
        offset += 1
        var members: [(key: String, value: JSONNode)] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a quoted field name") }
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a field name")
            skipWhitespace()
            members.append((key, try readValue()))
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                offset += 1
                return .object(members)
            }
            try expect(UInt8(ascii: ","), "',' or '}' in an object")
        }
    }

    private mutating func readArray() throws -> JSONNode {
        offset += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue())
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                offset += 1
                return .array(elements)
            }
            try expect(UInt8(ascii: ","), "',' or ']' in an array")
        }
    }

    private mutating func readLiteral(_ word: String) throws -> JSONNode {
        let expected = Array(word.utf8)
        guard bytes.count - offset >= expected.count, Array(bytes[offset..<(offset + expected.count)]) == expected else {
            throw error("expected \(word)")
        }
        offset += expected.count
        return .scalar(word)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func readNumber() throws -> JSONNode {
        let start = offset
        if current == UInt8(ascii: "-") { offset += 1 }
        if current == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard readDigits() > 0 else { throw error("expected a digit") }
        }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard readDigits() > 0 else { throw error("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard readDigits() > 0 else { throw error("expected a digit in the exponent") }
        }
        return .scalar(String(decoding: bytes[start..<offset], as: UTF8.self))
    }

    private mutating func readDigits() -> Int {
        let start = offset
        while let byte = current, (0x30...0x39).contains(byte) { offset += 1 }
        return offset - start
    }

    /// Reads a quoted string and returns its decoded value.
    private mutating func readString() throws -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        while true {
            guard let byte = current else { throw error("unterminated string") }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                scalars.append(contentsOf: String(decoding: bytes[runStart..<offset], as: UTF8.self).unicodeScalars)
                offset += 1
                if byte == UInt8(ascii: "\"") { return String(scalars) }
                scalars.append(try readEscape())
                runStart = offset
            } else if byte < 0x20 {
                throw error("control character in a string (escape it)")
            } else {
                offset += 1
            }
        }
    }

    private mutating func readEscape() throws -> Unicode.Scalar {
        guard let byte = current else { throw error("unterminated string") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"): return try readUnicodeEscape()
        default: throw error("unknown escape in a string")
        }
    }

    /// `\uXXXX`, combining a surrogate pair into one scalar.
    /// - Throws: a syntax error for a lone surrogate, which no UTF-8 text can hold (replacing it
    ///   would make different inputs store the same key).
    private mutating func readUnicodeEscape() throws -> Unicode.Scalar {
        let first = try readHex4()
        if (0xD800..<0xDC00).contains(first), bytes.count - offset >= 6,
            bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
        {
            let saved = offset
            offset += 2
            let second = try readHex4()
            if (0xDC00..<0xE000).contains(second), let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) {
                return scalar
            }
            offset = saved
        }
        guard let scalar = Unicode.Scalar(first) else { throw error("lone surrogate \\u\(String(first, radix: 16, uppercase: true))") }
        return scalar
    }

    private mutating func readHex4() throws -> UInt32 {
        let digits = bytes.count - offset >= 4 ? bytes[offset..<(offset + 4)] : []
        guard digits.count == 4, digits.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
            let value = UInt32(String(decoding: digits, as: UTF8.self), radix: 16)
        else { throw error("expected four hex digits after \\u") }
        offset += 4
        return value
    }
}
