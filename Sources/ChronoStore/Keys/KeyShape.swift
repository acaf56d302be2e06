// The shape of an identifier's ordered key encoding: recorded per datastore, so tools decode keys without the Swift type.
import Foundation

/// Which built-in key types an identifier is made of. The ordered key encoding does not
/// describe itself (an `Int` is eight bytes, a `String` its escaped UTF-8), so the typed layer
/// records each datastore's shape in the `$identifiers` collection as ``text``, and `chrono`
/// reads it to show and accept identifiers as JSON.
package indirect enum KeyShape: Equatable, Sendable {
    /// A signed integer of this many bytes (1, 2, 4 or 8; `Int` is 8).
    case signed(Int)
    /// An unsigned integer of this many bytes (1, 2, 4 or 8; `UInt` is 8).
    case unsigned(Int)
    case float
    case double
    case bool
    case string
    case uuid
    /// A `Date`: seconds since 2001 as a `Double`.
    case date
    case optional(KeyShape)
    /// ``KeyTuple2`` to ``KeyTuple4``.
    case tuple([KeyShape])

    /// The shape of `type`, or nil for a key type of the app's own (its bytes are opaque).
    package static func of(_ type: Any.Type) -> KeyShape? {
        if let shaped = type as? any ShapedKey.Type { return shaped.keyShape }
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Int.self), ObjectIdentifier(Int64.self): return .signed(8)
        case ObjectIdentifier(Int32.self): return .signed(4)
        case ObjectIdentifier(Int16.self): return .signed(2)
        case ObjectIdentifier(Int8.self): return .signed(1)
        case ObjectIdentifier(UInt.self), ObjectIdentifier(UInt64.self): return .unsigned(8)
        case ObjectIdentifier(UInt32.self): return .unsigned(4)
        case ObjectIdentifier(UInt16.self): return .unsigned(2)
        case ObjectIdentifier(UInt8.self): return .unsigned(1)
        case ObjectIdentifier(Float.self): return .float
        case ObjectIdentifier(Double.self): return .double
        case ObjectIdentifier(Bool.self): return .bool
        case ObjectIdentifier(String.self): return .string
        case ObjectIdentifier(UUID.self): return .uuid
        case ObjectIdentifier(Date.self): return .date
        default: return nil
        }
    }

    /// The stored text: `int64`, `uint8`, `double`, `string`, `uuid`, `date`, `optional(int64)`,
    /// `tuple(string,int64)` and so on.
    package var text: String {
        switch self {
        case .signed(let width): "int\(width * 8)"
        case .unsigned(let width): "uint\(width * 8)"
        case .float: "float"
        case .double: "double"
        case .bool: "bool"
        case .string: "string"
        case .uuid: "uuid"
        case .date: "date"
        case .optional(let wrapped): "optional(\(wrapped.text))"
        case .tuple(let components): "tuple(\(components.map(\.text).joined(separator: ",")))"
        }
    }

    /// Parses ``text``; nil for text that names no shape.
    package init?(text: String) {
        var parser = ShapeTextParser(text: Array(text.utf8))
        guard let shape = parser.shape(), parser.isAtEnd else { return nil }
        self = shape
    }
}

/// Key types built from other keys report their shape through this (`Optional`, the tuples).
protocol ShapedKey {
    static var keyShape: KeyShape? { get }
}

extension Optional: ShapedKey {
    static var keyShape: KeyShape? { KeyShape.of(Wrapped.self).map { .optional($0) } }
}

extension KeyTuple2: ShapedKey {
    static var keyShape: KeyShape? { KeyShape.tuple(of: [First.self, Second.self]) }
}

extension KeyTuple3: ShapedKey {
    static var keyShape: KeyShape? { KeyShape.tuple(of: [First.self, Second.self, Third.self]) }
}

extension KeyTuple4: ShapedKey {
    static var keyShape: KeyShape? { KeyShape.tuple(of: [First.self, Second.self, Third.self, Fourth.self]) }
}

extension KeyShape {
    /// A tuple of the components' shapes, or nil when one of them has none.
    static func tuple(of types: [Any.Type]) -> KeyShape? {
        var components: [KeyShape] = []
        for type in types {
            guard let shape = of(type) else { return nil }
            components.append(shape)
        }
        return .tuple(components)
    }
}

/// Reads the text form of a shape: a name, optionally followed by parenthesized arguments.
private struct ShapeTextParser {
    let text: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == text.count }

    mutating func shape() -> KeyShape? {
        var name = ""
        while offset < text.count, text[offset] != UInt8(ascii: "("), text[offset] != UInt8(ascii: ","),
            text[offset] != UInt8(ascii: ")")
        {
            name.unicodeScalars.append(Unicode.Scalar(text[offset]))
            offset += 1
        }
        switch name {
        case "optional":
            guard let arguments = arguments(), arguments.count == 1 else { return nil }
            return .optional(arguments[0])
        case "tuple":
            guard let arguments = arguments(), (2...4).contains(arguments.count) else { return nil }
            return .tuple(arguments)
        default: return Self.scalar(name)
        }
    }

    private static func scalar(_ name: String) -> KeyShape? {
        switch name {
        case "int8", "int16", "int32", "int64": return .signed(Int(name.dropFirst(3))! / 8)
        case "uint8", "uint16", "uint32", "uint64": return .unsigned(Int(name.dropFirst(4))! / 8)
        case "float": return .float
        case "double": return .double
        case "bool": return .bool
        case "string": return .string
        case "uuid": return .uuid
        case "date": return .date
        default: return nil
        }
    }

    private mutating func arguments() -> [KeyShape]? {
        guard offset < text.count, text[offset] == UInt8(ascii: "(") else { return nil }
        offset += 1
        var result: [KeyShape] = []
        while true {
            guard let shape = shape() else { return nil }
            result.append(shape)
            guard offset < text.count else { return nil }
            offset += 1
            if text[offset - 1] == UInt8(ascii: ")") { return result }
            if text[offset - 1] != UInt8(ascii: ",") { return nil }
        }
    }
}
