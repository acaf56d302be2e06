// Building page deltas: a greedy search that prefers to continue the previous alignment, which is
// what a slotted page whose entries shifted looks like.

extension PageDelta {
    /// Encodes `target` as operations against `base`; pass an empty base for a keyframe (then
    /// only inserts and fills are used, so runs of zeros cost a few bytes).
    ///
    /// The search suits B+tree pages: at every position it tries a copy that continues the last
    /// copy's alignment (taken at once when it runs ``longMatchByteCount`` bytes), a copy at the
    /// same offset, a copy at the last adjusted copy's alignment (entries move as far as the
    /// offset slots before them grew), up to ``candidateLimit`` copies found through a hash of
    /// the base's 4-byte windows at every fourth position, a fill, and adjusted copies of 16-bit
    /// words near those
    /// alignments (the offset slots of a leaf or branch after an entry before them changed size
    /// or was inserted). It takes the operation that saves the most bytes over inserting them, or
    /// inserts one byte.
    ///
    /// Cost: O(page size × candidates) time, O(page size) memory; about 10 µs for a 4 KiB leaf
    /// in an optimized build, and 0.5 µs to decode it.
    package static func encode(_ target: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> [UInt8] {
        var encoder = DeltaEncoder(target: target, base: base)
        return encoder.run()
    }

    /// Encodes arrays; see ``encode(_:base:)-(UnsafeRawBufferPointer,_)``.
    package static func encode(_ target: [UInt8], base: [UInt8]) -> [UInt8] {
        target.withUnsafeBytes { targetBytes in
            base.withUnsafeBytes { baseBytes in encode(targetBytes, base: baseBytes) }
        }
    }

    /// Hash candidates examined per position.
    static let candidateLimit = 8
    /// A copy at the previous alignment this long is taken without looking further.
    static let longMatchByteCount = 64
}

/// One operation the encoder could emit at the current position.
private struct Candidate {
    var operation: PageDelta.Operation
    /// Target bytes it writes.
    var byteCount: Int
    var shift = 0
    var addend: UInt16 = 0
    var fillByte: UInt8 = 0

    /// Encoded size of the operation.
    var cost: Int {
        let length = operation == .adjustedCopy ? byteCount / 2 : byteCount
        var cost = 1 + (length > PageDelta.inlineLengthLimit ? DeltaWriter.varintSize(length) : 0)
        switch operation {
        case .copy: cost += DeltaWriter.varintSize(DeltaWriter.zigzag(shift))
        case .fill: cost += 1
        case .adjustedCopy: cost += DeltaWriter.varintSize(DeltaWriter.zigzag(shift)) + 2
        case .insert: cost += byteCount
        }
        return cost
    }

    /// Bytes saved over inserting the same bytes.
    var gain: Int { byteCount - cost }
}

/// The greedy encoder's state: the output so far, the pending literal run and the last alignment.
private struct DeltaEncoder {
    let target: UnsafeRawBufferPointer
    let base: UnsafeRawBufferPointer
    let index: BaseIndex
    var writer = DeltaWriter()
    var position = 0
    /// Where the pending (not yet emitted) literal bytes start; equal to `position` when none.
    var literalStart = 0
    var lastShift = 0
    var lastAdjustedShift = 0

    init(target: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) {
        self.target = target
        self.base = base
        index = BaseIndex(base)
    }

    mutating func run() -> [UInt8] {
        writer.byte(PageDelta.version)
        writer.varint(target.count)
        writer.varint(base.count)
        while position < target.count {
            let pending = position > literalStart
            if var candidate = bestCandidate(), candidate.gain >= (pending ? 2 : 1) {
                extendBackwards(&candidate)
                flushLiteral()
                emit(candidate)
                position += candidate.byteCount
                literalStart = position
            } else {
                position += 1
            }
        }
        flushLiteral()
        return writer.bytes
    }

    private func bestCandidate() -> Candidate? {
        var best: Candidate?
        func consider(_ candidate: Candidate?) {
            guard let candidate, candidate.byteCount > 0 else { return }
            if best == nil || candidate.gain > best!.gain { best = candidate }
        }
        // The common case, a long run at the previous alignment, needs no search.
        consider(copy(shift: lastShift))
        if let found = best, found.byteCount >= PageDelta.longMatchByteCount { return found }
        if lastShift != 0 { consider(copy(shift: 0)) }
        // Entries move by as much as the offset slots before them grew.
        if lastAdjustedShift != lastShift && lastAdjustedShift != 0 { consider(copy(shift: lastAdjustedShift)) }
        index.forEachCandidate(target, at: position, limit: PageDelta.candidateLimit) { source in
            let shift = source - position
            if shift != lastShift && shift != 0 && shift != lastAdjustedShift { consider(copy(shift: shift)) }
        }
        consider(fill())
        for step in -1...1 {
            consider(adjustedCopy(shift: lastShift + 2 * step))
            if lastAdjustedShift != lastShift { consider(adjustedCopy(shift: lastAdjustedShift + 2 * step)) }
        }
        if lastShift != 0 && lastAdjustedShift != 0 { consider(adjustedCopy(shift: 0)) }
        return best
    }

    private func copy(shift: Int) -> Candidate? {
        let source = position + shift
        guard source >= 0, source < base.count else { return nil }
        let limit = min(target.count - position, base.count - source)
        var length = 0
        while length < limit && target[position + length] == base[source + length] { length += 1 }
        return Candidate(operation: .copy, byteCount: length, shift: shift)
    }

    /// Moves an operation's start back over pending literal bytes it covers too: the index
    /// holds only every ``BaseIndex/stride``th base position, so a copy is often found a little
    /// late.
    private mutating func extendBackwards(_ candidate: inout Candidate) {
        switch candidate.operation {
        case .copy:
            while position > literalStart, position + candidate.shift > 0,
                target[position - 1] == base[position - 1 + candidate.shift]
            {
                step(back: 1, &candidate)
            }
        case .fill:
            while position > literalStart, target[position - 1] == candidate.fillByte { step(back: 1, &candidate) }
        case .adjustedCopy:
            while position - 2 >= literalStart, position - 2 + candidate.shift >= 0,
                word(target, position - 2) &- word(base, position - 2 + candidate.shift) == candidate.addend
            {
                step(back: 2, &candidate)
            }
        case .insert:
            break
        }
    }

    private mutating func step(back byteCount: Int, _ candidate: inout Candidate) {
        position -= byteCount
        candidate.byteCount += byteCount
    }

    private func fill() -> Candidate? {
        let value = target[position]
        var length = 1
        while position + length < target.count && target[position + length] == value { length += 1 }
        return length >= 4 ? Candidate(operation: .fill, byteCount: length, fillByte: value) : nil
    }

    /// Words of the base at `shift`, each differing from the target's by one nonzero constant.
    private func adjustedCopy(shift: Int) -> Candidate? {
        let source = position + shift
        let limit = min(target.count - position, base.count - source) / 2
        guard source >= 0, limit >= 2 else { return nil }
        let addend = word(target, position) &- word(base, source)
        // Offsets inside one page differ by less than a page; other words rarely do.
        guard addend != 0, Int(Int16(bitPattern: addend)).magnitude < min(base.count, 1 << 15) else { return nil }
        var words = 1
        while words < limit && word(target, position + 2 * words) &- word(base, source + 2 * words) == addend { words += 1 }
        return words >= 2 ? Candidate(operation: .adjustedCopy, byteCount: 2 * words, shift: shift, addend: addend) : nil
    }

    private func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private mutating func emit(_ candidate: Candidate) {
        let length = candidate.operation == .adjustedCopy ? candidate.byteCount / 2 : candidate.byteCount
        writer.control(candidate.operation, length: length)
        switch candidate.operation {
        case .copy:
            writer.varint(DeltaWriter.zigzag(candidate.shift))
            lastShift = candidate.shift
        case .fill:
            writer.byte(candidate.fillByte)
        case .adjustedCopy:
            writer.varint(DeltaWriter.zigzag(candidate.shift))
            writer.byte(UInt8(truncatingIfNeeded: candidate.addend))
            writer.byte(UInt8(truncatingIfNeeded: candidate.addend >> 8))
            lastAdjustedShift = candidate.shift
        case .insert:
            preconditionFailure("literals are emitted by flushLiteral")
        }
    }

    private mutating func flushLiteral() {
        guard position > literalStart else { return }
        writer.control(.insert, length: position - literalStart)
        writer.append(UnsafeRawBufferPointer(rebasing: target[literalStart..<position]))
        literalStart = position
    }
}

/// Positions of the base's 4-byte windows by hash, for finding copies of moved bytes: every
/// `stride`th position, which finds every match of at least `windowByteCount + stride − 1`
/// bytes. Windows of one repeated byte are left out: fills cover those.
private struct BaseIndex {
    private static let windowByteCount = 4
    static let stride = 4
    private let mask: Int
    private var heads: [Int32]
    private var next: [Int32]
    private let base: UnsafeRawBufferPointer

    init(_ base: UnsafeRawBufferPointer) {
        self.base = base
        var tableSize = 256
        while tableSize < base.count / Self.stride { tableSize <<= 1 }
        mask = tableSize - 1
        heads = [Int32](repeating: -1, count: tableSize)
        next = [Int32](repeating: -1, count: base.count / Self.stride + 1)
        guard base.count >= Self.windowByteCount else { return }
        let last = (base.count - Self.windowByteCount) / Self.stride * Self.stride
        for position in Swift.stride(from: last, through: 0, by: -Self.stride) {
            guard let hash = Self.hash(base, position, mask: mask) else { continue }
            next[position / Self.stride] = heads[hash]
            heads[hash] = Int32(position)
        }
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer, _ position: Int, mask: Int) -> Int? {
        let word = UInt32(bytes[position]) | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2]) << 16
            | UInt32(bytes[position + 3]) << 24
        if word == UInt32(bytes[position]) &* 0x0101_0101 { return nil }
        return Int((word &* 0x9E37_79B1) >> 12) & mask
    }

    /// Calls `body` with up to `limit` base positions whose window hashes like the target's at `position`.
    func forEachCandidate(_ target: UnsafeRawBufferPointer, at position: Int, limit: Int, _ body: (Int) -> Void) {
        guard position + Self.windowByteCount <= target.count, let hash = Self.hash(target, position, mask: mask) else {
            return
        }
        var candidate = heads[hash]
        var seen = 0
        while candidate >= 0 && seen < limit {
            body(Int(candidate))
            candidate = next[Int(candidate) / Self.stride]
            seen += 1
        }
    }
}

/// Appends delta fields.
struct DeltaWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    mutating func varint(_ value: Int) {
        precondition(value >= 0 && UInt64(value) <= PageDelta.varintLimit, "varint out of range")
        var remaining = value
        while remaining >= 0x80 {
            bytes.append(UInt8(remaining & 0x7F) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }

    /// A control byte, with the length inline when it fits and as a varint after it otherwise.
    mutating func control(_ operation: PageDelta.Operation, length: Int) {
        if length <= PageDelta.inlineLengthLimit {
            byte(UInt8(length) << 2 | operation.rawValue)
        } else {
            byte(operation.rawValue)
            varint(length)
        }
    }

    static func zigzag(_ value: Int) -> Int { value >= 0 ? value << 1 : ((-value) << 1) - 1 }

    static func varintSize(_ value: Int) -> Int {
        var size = 1
        var remaining = value >> 7
        while remaining > 0 {
            size += 1
            remaining >>= 7
        }
        return size
    }
}
