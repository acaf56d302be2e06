// The spec reader's own page delta decoder, written from "Page delta encoding" in FileFormat.md
// alone: every rule of "Rules a decoder enforces" is checked before the bytes are acted on.

/// Why a delta is not valid, one case per rule of the spec's table.
enum SpecDeltaError: Error, Equatable {
    case truncated(offset: Int)
    case unsupportedVersion
    case varintOutOfRange(offset: Int)
    case targetLengthMismatch
    case baseLengthMismatch
    case zeroLength(offset: Int)
    case overrunsTarget(offset: Int)
    case copyOutsideBase(offset: Int)
    case incomplete(written: Int, expected: Int)
}

/// Decodes a delta (version 1) against `base` into `targetLength` bytes.
struct SpecPageDelta {
    private let delta: [UInt8]
    private let base: [UInt8]
    private var position = 0
    private var target: [UInt8] = []

    static func decode(_ delta: [UInt8], base: [UInt8], targetLength: Int) throws(SpecDeltaError) -> [UInt8] {
        var decoder = SpecPageDelta(delta: delta, base: base)
        return try decoder.run(targetLength: targetLength)
    }

    private init(delta: [UInt8], base: [UInt8]) {
        self.delta = delta
        self.base = base
    }

    private mutating func run(targetLength: Int) throws(SpecDeltaError) -> [UInt8] {
        guard position < delta.count else { throw .truncated(offset: 0) }
        guard delta[0] == 1 else { throw .unsupportedVersion }
        position = 1
        guard try varint() == targetLength else { throw .targetLengthMismatch }
        guard try varint() == base.count else { throw .baseLengthMismatch }
        target.reserveCapacity(targetLength)
        while position < delta.count { try operation(targetLength: targetLength) }
        guard target.count == targetLength else { throw .incomplete(written: target.count, expected: targetLength) }
        return target
    }

    /// One operation: control byte (bits 0–1 the operation, bits 2–7 the length, 0 = a varint
    /// length follows), the length checked against the target, then its fields, then the bytes
    /// it writes at the current target offset.
    private mutating func operation(targetLength: Int) throws(SpecDeltaError) {
        let start = position
        let control = delta[position]
        position += 1
        var length = Int(control >> 2)
        if length == 0 { length = try varint() }
        guard length >= 1 else { throw .zeroLength(offset: start) }
        let t = target.count
        let written = control & 3 == 3 ? 2 * length : length
        guard written <= targetLength - t else { throw .overrunsTarget(offset: start) }
        switch control & 3 {
        case 0:
            let from = try baseRange(t + (try zigzag()), byteCount: length, operation: start)
            target += base[from..<(from + length)]
        case 1:
            let literal = try bytes(length)
            target += delta[literal..<(literal + length)]
        case 2:
            target += repeatElement(delta[try bytes(1)], count: length)
        default:
            let shift = try zigzag()
            let addendAt = try bytes(2)
            let addend = UInt16(delta[addendAt]) | UInt16(delta[addendAt + 1]) << 8
            let from = try baseRange(t + shift, byteCount: written, operation: start)
            for word in 0..<length {
                let sum = (UInt16(base[from + 2 * word]) | UInt16(base[from + 2 * word + 1]) << 8) &+ addend
                target.append(UInt8(truncatingIfNeeded: sum))
                target.append(UInt8(truncatingIfNeeded: sum >> 8))
            }
        }
    }

    /// Checks 0 ≤ start and start + byteCount ≤ base length; returns start.
    private func baseRange(_ start: Int, byteCount: Int, operation: Int) throws(SpecDeltaError) -> Int {
        guard start >= 0, start + byteCount <= base.count else { throw .copyOutsideBase(offset: operation) }
        return start
    }

    /// Skips `count` bytes of a field that must lie inside the delta; returns where they start.
    private mutating func bytes(_ count: Int) throws(SpecDeltaError) -> Int {
        guard count <= delta.count - position else { throw .truncated(offset: position) }
        defer { position += count }
        return position
    }

    /// Unsigned LEB128 of at most 5 bytes and a value of at most 2³² − 1. A varint cut short
    /// is reported at its first missing byte, a wrong one where it starts.
    private mutating func varint() throws(SpecDeltaError) -> Int {
        let start = position
        var value: UInt64 = 0
        for index in 0..<5 {
            guard position < delta.count else { throw .truncated(offset: position) }
            let byte = delta[position]
            position += 1
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 {
                guard value <= UInt64(UInt32.max) else { throw .varintOutOfRange(offset: start) }
                return Int(value)
            }
        }
        throw .varintOutOfRange(offset: start)
    }

    /// A zigzag varint: even v is v / 2, odd v is −(v + 1) / 2.
    private mutating func zigzag() throws(SpecDeltaError) -> Int {
        let value = try varint()
        return value % 2 == 0 ? value / 2 : -(value + 1) / 2
    }
}
