// The page delta encoding: one page rebuilt from copy, insert, fill and adjusted-copy operations
// against a base page, and its bounds-checked decoder.

/// A page expressed as operations against a base page (for packed history: an older version of
/// a page against the newer version that replaced it). Version 1 of the encoding; the layout is
/// in Docs/FileFormat.md, "Page delta encoding".
///
/// | field | size | content |
/// |---|---|---|
/// | version | 1 | 1 |
/// | target length | varint | bytes the delta rebuilds (the page size) |
/// | base length | varint | bytes of the base it applies to; 0 = no base (a keyframe) |
/// | operations | … | until the delta ends; together they write the target exactly once, in order |
///
/// Each operation starts with a control byte: bits 0–1 the operation, bits 2–7 a length L.
/// L = 0 means the length follows as a varint. The length counts bytes, except for
/// ``Operation/adjustedCopy``, where it counts 2-byte words.
///
/// | operation | value | after the length | writes |
/// |---|---|---|---|
/// | copy | 0 | shift (zigzag varint) | n bytes of the base from target position + shift |
/// | insert | 1 | n literal bytes | those bytes |
/// | fill | 2 | one byte b | n copies of b |
/// | adjusted copy | 3 | shift (zigzag varint), addend (2, little-endian) | n little-endian 16-bit words of the base from target position + shift, each plus the addend modulo 2¹⁶ |
///
/// Varints are unsigned LEB128 (7 bits a byte, low bits first, high bit = more follows), at most
/// 5 bytes and at most 2³² − 1. A zigzag varint v stands for the signed value v / 2 when v is
/// even and −(v + 1) / 2 when it is odd.
package enum PageDelta {
    package static let version: UInt8 = 1

    /// The operations, as stored in bits 0–1 of a control byte.
    enum Operation: UInt8 {
        case copy = 0
        case insert = 1
        case fill = 2
        case adjustedCopy = 3
    }

    /// Lengths up to this value fit in the control byte.
    static let inlineLengthLimit = 63
    /// The largest varint value a delta may hold.
    static let varintLimit: UInt64 = 0xFFFF_FFFF
    static let varintMaximumByteCount = 5

    /// Rebuilds the page `delta` describes from `base` into `target`, whose count must equal the
    /// target length the delta records.
    ///
    /// Every length, shift and offset is checked before it is used, so a damaged or crafted
    /// delta throws and never reads or writes outside `delta`, `base` or `target`. A delta that
    /// decodes is not thereby the right page: callers verify the result (packed history checks
    /// the page checksum).
    /// - Throws: ``PageDeltaError`` naming what is wrong and the delta offset where it was found.
    package static func decode(
        _ delta: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer, into target: UnsafeMutableRawBufferPointer
    ) throws(PageDeltaError) {
        var reader = DeltaReader(bytes: delta)
        let version = try reader.byte()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let targetLength = try reader.varint()
        guard targetLength == target.count else { throw .targetLengthMismatch(recorded: targetLength, expected: target.count) }
        let baseLength = try reader.varint()
        guard baseLength == base.count else { throw .baseLengthMismatch(recorded: baseLength, actual: base.count) }
        var position = 0
        while !reader.isAtEnd {
            position = try applyOperation(&reader, base: base, target: target, position: position)
        }
        guard position == target.count else { throw .incomplete(written: position, expected: target.count) }
    }

    /// Decodes into a new array of `targetLength` bytes.
    /// - Throws: ``PageDeltaError``, as ``decode(_:base:into:)``.
    package static func decode(_ delta: [UInt8], base: [UInt8], targetLength: Int) throws -> [UInt8] {
        var target = [UInt8](repeating: 0, count: targetLength)
        try delta.withUnsafeBytes { deltaBytes in
            try base.withUnsafeBytes { baseBytes in
                try target.withUnsafeMutableBytes { targetBytes in try decode(deltaBytes, base: baseBytes, into: targetBytes) }
            }
        }
        return target
    }

    /// Applies one operation at `position`; returns the position after what it wrote.
    private static func applyOperation(
        _ reader: inout DeltaReader, base: UnsafeRawBufferPointer, target: UnsafeMutableRawBufferPointer, position: Int
    ) throws(PageDeltaError) -> Int {
        let start = reader.offset
        let control = try reader.byte()
        let operation = Operation(rawValue: control & 0b11)!
        var length = Int(control >> 2)
        if length == 0 { length = try reader.varint() }
        guard length > 0 else { throw .zeroLength(offset: start) }
        let byteCount = operation == .adjustedCopy ? 2 * length : length
        guard byteCount <= target.count - position else { throw .overrunsTarget(offset: start) }
        switch operation {
        case .copy:
            let source = position + (try reader.zigzag())
            guard source >= 0, source <= base.count - byteCount else { throw .copyOutsideBase(offset: start) }
            target.baseAddress!.advanced(by: position).copyMemory(from: base.baseAddress! + source, byteCount: byteCount)
        case .insert:
            let literal = try reader.bytes(byteCount)
            target.baseAddress!.advanced(by: position).copyMemory(from: literal.baseAddress!, byteCount: byteCount)
        case .fill:
            let value = try reader.byte()
            target.baseAddress!.advanced(by: position).initializeMemory(as: UInt8.self, repeating: value, count: byteCount)
        case .adjustedCopy:
            let source = position + (try reader.zigzag())
            let addend = try reader.word()
            guard source >= 0, source <= base.count - byteCount else { throw .copyOutsideBase(offset: start) }
            for word in 0..<length {
                let value: UInt16 = UnsafeRawBufferPointer(base).loadLittleEndian(at: source + 2 * word)
                target.storeLittleEndian(value &+ addend, at: position + 2 * word)
            }
        }
        return position + byteCount
    }
}

/// Why a page delta could not be decoded. Packed history reports it as damage to the page it
/// was rebuilding.
package enum PageDeltaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The delta ends in the middle of a field or operation.
    case truncated(offset: Int)
    /// The first byte names an encoding this library does not know.
    case unsupportedVersion(UInt8)
    /// A varint is longer than 5 bytes or above 2³² − 1.
    case varintOutOfRange(offset: Int)
    /// The delta rebuilds a page of another size than the caller expects.
    case targetLengthMismatch(recorded: Int, expected: Int)
    /// The delta was made against a base of another size than the one given.
    case baseLengthMismatch(recorded: Int, actual: Int)
    /// An operation has length 0.
    case zeroLength(offset: Int)
    /// An operation writes past the end of the target.
    case overrunsTarget(offset: Int)
    /// A copy reads outside the base.
    case copyOutsideBase(offset: Int)
    /// The operations end before the whole target is written.
    case incomplete(written: Int, expected: Int)

    package var description: String {
        switch self {
        case .truncated(let offset): return "page delta ends inside the field at byte \(offset)"
        case .unsupportedVersion(let version): return "page delta encoding version \(version) is not supported"
        case .varintOutOfRange(let offset): return "page delta number at byte \(offset) is out of range"
        case .targetLengthMismatch(let recorded, let expected):
            return "page delta rebuilds \(recorded) bytes, expected \(expected)"
        case .baseLengthMismatch(let recorded, let actual):
            return "page delta was made against \(recorded) base bytes, the base has \(actual)"
        case .zeroLength(let offset): return "page delta operation at byte \(offset) has length 0"
        case .overrunsTarget(let offset): return "page delta operation at byte \(offset) writes past the page end"
        case .copyOutsideBase(let offset): return "page delta operation at byte \(offset) copies from outside the base"
        case .incomplete(let written, let expected):
            return "page delta writes \(written) of \(expected) bytes"
        }
    }
}

/// A cursor over delta bytes whose every read is bounds-checked.
struct DeltaReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws(PageDeltaError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func word() throws(PageDeltaError) -> UInt16 {
        guard bytes.count - offset >= 2 else { throw .truncated(offset: offset) }
        defer { offset += 2 }
        return bytes.loadLittleEndian(at: offset)
    }

    mutating func bytes(_ count: Int) throws(PageDeltaError) -> UnsafeRawBufferPointer {
        guard bytes.count - offset >= count else { throw .truncated(offset: offset) }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// An unsigned LEB128 varint of at most 5 bytes and at most 2³² − 1.
    mutating func varint() throws(PageDeltaError) -> Int {
        let start = offset
        var value: UInt64 = 0
        for index in 0..<PageDelta.varintMaximumByteCount {
            let next = try byte()
            value |= UInt64(next & 0x7F) << (7 * UInt64(index))
            if next & 0x80 == 0 {
                guard value <= PageDelta.varintLimit else { throw .varintOutOfRange(offset: start) }
                return Int(value)
            }
        }
        throw .varintOutOfRange(offset: start)
    }

    /// A zigzag varint: even values are v / 2, odd values −(v + 1) / 2.
    mutating func zigzag() throws(PageDeltaError) -> Int {
        let value = try varint()
        return value & 1 == 0 ? value >> 1 : -((value + 1) >> 1)
    }
}
