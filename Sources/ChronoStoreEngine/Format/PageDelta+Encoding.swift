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
    /// Matches are compared 16 and then 8 bytes at a time; a stretch that lines up again at the last alignment
    /// soon (a value changed in place) skips the hash candidates; and in a stretch with no match the search looks at
    /// every position for the first ``skipAfterMisses`` positions, then steps further each time
    /// (a copy found after a step is extended backwards over the bytes it stepped over), so
    /// new random bytes cost little search. Keyframes take a one-pass path of literals and fills.
    ///
    /// Cost: O(page size × candidates) time in the worst case, O(page size) memory; about 2 µs
    /// for a 4 KiB leaf whose value changed in an optimized build, and 0.5 µs to decode it.
    package static func encode(_ target: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> [UInt8] {
        if base.isEmpty { return encodeKeyframe(target) }
        if let delta = encodeLocalChange(target, base: base) { return delta }
        var encoder = DeltaEncoder(target: target, base: base)
        return encoder.run()
    }

    /// The delta of a page that differs from its base only in one short stretch at the same
    /// place (a leaf whose value was replaced by one of the same size, a branch with one new
    /// child pointer: most old versions packed history meets): a copy of the common prefix, the
    /// stretch as a literal, a copy of the common suffix. Nil, for the full search, when the
    /// lengths differ, the stretch is longer than ``localChangeByteLimit`` or holds a run of
    /// ``localMatchByteLimit`` bytes equal to the base's, which a copy would save. O(page size)
    /// in 8-byte compares; the search took about 150 probes, one per byte of the stretch.
    static func encodeLocalChange(_ target: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) -> [UInt8]? {
        let count = target.count
        guard count == base.count, count > 0, let targetStart = target.baseAddress, let baseStart = base.baseAddress else { return nil }
        let prefix = commonPrefixByteCount(targetStart, baseStart, count: count)
        let end = count - commonSuffixByteCount(targetStart, baseStart, total: count, count: count - prefix)
        guard end - prefix <= localChangeByteLimit else { return nil }
        var run = 0
        for index in prefix..<end {
            run = target[index] == base[index] ? run + 1 : 0
            if run >= localMatchByteLimit { return nil }
        }
        var writer = DeltaWriter()
        writer.reserve(end - prefix + 16)
        writer.byte(PageDelta.version)
        writer.varint(count)
        writer.varint(count)
        if prefix > 0 {
            writer.control(.copy, length: prefix)
            writer.varint(DeltaWriter.zigzag(0))
        }
        if end > prefix {
            writer.control(.insert, length: end - prefix)
            writer.append(UnsafeRawBufferPointer(rebasing: target[prefix..<end]))
        }
        if end < count {
            writer.control(.copy, length: count - end)
            writer.varint(DeltaWriter.zigzag(0))
        }
        return writer.bytes
    }

    /// How many leading bytes of two `count`-byte buffers are equal. Compares 32 bytes a step
    /// (four 8-byte words folded into one test), then 8, then single bytes: a 4 KiB page costs
    /// about 130 steps instead of 512.
    static func commonPrefixByteCount(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Int {
        var index = 0
        while count - index >= 32, !differ32(left, right, at: index) { index += 32 }
        while count - index >= 8,
            left.loadUnaligned(fromByteOffset: index, as: UInt64.self) == right.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        {
            index += 8
        }
        while index < count && left.load(fromByteOffset: index, as: UInt8.self) == right.load(fromByteOffset: index, as: UInt8.self) {
            index += 1
        }
        return index
    }

    /// How many trailing bytes of two buffers are equal, looking at most `count` bytes back
    /// from `total`, the buffers' length. Same steps as ``commonPrefixByteCount(_:_:count:)``.
    static func commonSuffixByteCount(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, total: Int, count: Int) -> Int {
        var end = total
        let floor = total - count
        while end - floor >= 32, !differ32(left, right, at: end - 32) { end -= 32 }
        while end - floor >= 8,
            left.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == right.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self)
        {
            end -= 8
        }
        while end > floor && left.load(fromByteOffset: end - 1, as: UInt8.self) == right.load(fromByteOffset: end - 1, as: UInt8.self) {
            end -= 1
        }
        return total - end
    }

    /// Whether the 32 bytes at `offset` differ: four 8-byte words folded into one test.
    @inline(__always)
    private static func differ32(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, at offset: Int) -> Bool {
        // Written out: a loop over the four words compiled to 2.5 times the instructions.
        func word(_ index: Int) -> UInt64 {
            left.loadUnaligned(fromByteOffset: offset + index, as: UInt64.self)
                ^ right.loadUnaligned(fromByteOffset: offset + index, as: UInt64.self)
        }
        return word(0) | word(8) | word(16) | word(24) != 0
    }

    /// The longest stretch ``encodeLocalChange(_:base:)`` writes as one literal.
    static let localChangeByteLimit = 256
    /// A run of bytes equal to the base's this long inside the stretch sends it to the search.
    static let localMatchByteLimit = 12

    /// A keyframe: literal runs, and fills for runs of one byte long enough to save bytes.
    /// O(page size), one pass.
    static func encodeKeyframe(_ target: UnsafeRawBufferPointer) -> [UInt8] {
        var writer = DeltaWriter()
        writer.reserve(target.count / 2)
        writer.byte(PageDelta.version)
        writer.varint(target.count)
        writer.varint(0)
        var literalStart = 0
        var position = 0
        while position < target.count {
            let value = target[position]
            // Most bytes of a page start no run: one compare moves past them.
            if position + 1 < target.count && target[position + 1] != value {
                position += 1
                continue
            }
            var end = position + 1
            // Runs (the zero tail of a page above all) are measured 8 bytes at a time.
            let pattern = UInt64(value) &* 0x0101_0101_0101_0101
            while target.count - end >= 8, target.loadUnaligned(fromByteOffset: end, as: UInt64.self) == pattern { end += 8 }
            while end < target.count && target[end] == value { end += 1 }
            // A fill costs at most 1 + 3 + 1 bytes; shorter runs stay in the literal.
            if end - position >= fillMinimumByteCount {
                if position > literalStart {
                    writer.control(.insert, length: position - literalStart)
                    writer.append(UnsafeRawBufferPointer(rebasing: target[literalStart..<position]))
                }
                writer.control(.fill, length: end - position)
                writer.byte(value)
                literalStart = end
            }
            position = end
        }
        if position > literalStart {
            writer.control(.insert, length: position - literalStart)
            writer.append(UnsafeRawBufferPointer(rebasing: target[literalStart..<position]))
        }
        return writer.bytes
    }

    /// A run of one byte at least this long is written as a fill inside a keyframe.
    static let fillMinimumByteCount = 6

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
    /// Positions searched one by one in a stretch without matches before the search steps over
    /// bytes; every further `skipAfterMisses` misses lengthen the step by one byte.
    static let skipAfterMisses = 8
    /// A stretch without matches that lines up again at the last alignment within this many
    /// bytes, for at least ``resyncByteCount`` bytes, is searched without hash candidates (the
    /// hash index of the base is built only for pages whose bytes moved), and after
    /// ``skipAfterMisses`` misses the search jumps to where it lines up.
    static let resyncWindow = 512
    static let resyncByteCount = 16
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
    /// Built the first time a search needs it (a page that only changed in place never does).
    var index: BaseIndex?
    var writer = DeltaWriter()
    var position = 0
    /// Where the pending (not yet emitted) literal bytes start; equal to `position` when none.
    var literalStart = 0
    var lastShift = 0
    var lastAdjustedShift = 0
    /// For the stretch without matches under way: whether the target lines up with the base at
    /// the last alignment again a little further on (a value changed in place), which makes
    /// hash candidates pointless there; nil until the stretch first needs them.
    var stretchResyncs: Bool?
    /// Where that stretch lines up again, when it does.
    var resyncPosition = 0
    /// What earlier probes for a resync learned, valid while the alignment stays `probedShift`:
    /// every position up to `probedThrough` was probed, and `probedResync` is the first that
    /// lines up after the last miss (nil: none up to `probedThrough`). Stretches then never probe
    /// the same bytes twice, so a page of many short stretches (a root page's lists) costs
    /// O(page) in probes rather than O(page × window).
    var probedShift = Int.min
    var probedThrough = -1
    var probedResync: Int?
    /// Positions resync probes may still examine in this page. A page of many short stretches
    /// at changing alignments (a root page's sorted lists, where entries of the base reappear
    /// between new ones) would probe most of a window per stretch; once the budget is spent the
    /// search uses hash candidates, which find such entries directly.
    var probeBudget: Int

    init(target: UnsafeRawBufferPointer, base: UnsafeRawBufferPointer) {
        self.target = target
        self.base = base
        self.probeBudget = target.count / 2
    }

    mutating func run() -> [UInt8] {
        writer.reserve(256)
        writer.byte(PageDelta.version)
        writer.varint(target.count)
        writer.varint(base.count)
        var misses = 0
        while position < target.count {
            let pending = position > literalStart
            if var candidate = bestCandidate(), candidate.gain >= (pending ? 2 : 1) {
                extendBackwards(&candidate)
                flushLiteral()
                emit(candidate)
                position += candidate.byteCount
                literalStart = position
                misses = 0
                stretchResyncs = nil
            } else {
                // Past the first misses of a stretch, step over bytes (a later copy reaches back),
                // or straight to where the stretch lines up again.
                misses += 1
                if misses >= PageDelta.skipAfterMisses, stretchResyncs == true, resyncPosition > position {
                    position = resyncPosition
                    continue
                }
                let step = misses <= PageDelta.skipAfterMisses ? 1 : 1 + (misses - 1) / PageDelta.skipAfterMisses
                position = min(position + step, target.count)
            }
        }
        flushLiteral()
        return writer.bytes
    }

    private mutating func bestCandidate() -> Candidate? {
        var best: Candidate?
        // The common case, a long run at the previous alignment, needs no search.
        Self.keep(copy(shift: lastShift), in: &best)
        if let found = best, found.byteCount >= PageDelta.longMatchByteCount { return found }
        if lastShift != 0 { Self.keep(copy(shift: 0), in: &best) }
        // Entries move by as much as the offset slots before them grew.
        if lastAdjustedShift != lastShift && lastAdjustedShift != 0 { Self.keep(copy(shift: lastAdjustedShift), in: &best) }
        if position + BaseIndex.windowByteCount <= target.count, !resyncsSoon(weakMatch: best) {
            if index == nil { index = BaseIndex(base) }
            let (index, lastShift, lastAdjustedShift, position) = (self.index!, self.lastShift, self.lastAdjustedShift, self.position)
            index.forEachCandidate(target, at: position, limit: PageDelta.candidateLimit) { source in
                let shift = source - position
                if shift != lastShift && shift != 0 && shift != lastAdjustedShift { Self.keep(copy(shift: shift), in: &best) }
            }
        }
        Self.keep(fill(), in: &best)
        // Adjusted copies are of offset slots: two words that could both be offsets in the page.
        guard position + 4 <= target.count, Int(word(target, position)) < base.count, Int(word(target, position + 2)) < base.count
        else { return best }
        for step in -1...1 {
            Self.keep(adjustedCopy(shift: lastShift + 2 * step), in: &best)
            if lastAdjustedShift != lastShift { Self.keep(adjustedCopy(shift: lastAdjustedShift + 2 * step), in: &best) }
        }
        if lastShift != 0 && lastAdjustedShift != 0 { Self.keep(adjustedCopy(shift: 0), in: &best) }
        return best
    }

    /// Makes `candidate` the best so far when it saves more bytes (a static function with an
    /// inout parameter, not a closure over `best`: the encoder's hottest path has no boxed
    /// variable and no dynamic exclusivity check).
    private static func keep(_ candidate: Candidate?, in best: inout Candidate?) {
        guard let candidate, candidate.byteCount > 0 else { return }
        if let current = best, candidate.gain <= current.gain { return }
        best = candidate
    }

    /// Whether the stretch at `position` ends within ``PageDelta/resyncWindow`` bytes with a
    /// copy of at least ``PageDelta/resyncByteCount`` bytes (not all one byte) at the last
    /// alignment. Decided once per stretch, and only when the cheap candidates found nothing long.
    private mutating func resyncsSoon(weakMatch: Candidate?) -> Bool {
        if let weakMatch, weakMatch.byteCount >= PageDelta.resyncByteCount { return false }
        if let known = stretchResyncs { return known }
        guard probeBudget > 0 else {
            stretchResyncs = false
            return false
        }
        let end = min(position + PageDelta.resyncWindow, target.count - PageDelta.resyncByteCount, base.count - PageDelta.resyncByteCount - lastShift)
        var probe = position + 1
        if probedShift == lastShift {
            if let known = probedResync, known > position {
                resyncPosition = known
                stretchResyncs = known <= end
                return known <= end
            }
            probe = max(probe, probedThrough + 1)
        } else {
            probedShift = lastShift
            probedThrough = -1
            probedResync = nil
        }
        let start = probe
        var found = false
        while probe <= end {
            if probe + lastShift >= 0, target[probe] == base[probe + lastShift],
                Self.matchLength(target, probe, base, probe + lastShift, limit: PageDelta.resyncByteCount) == PageDelta.resyncByteCount,
                !Self.isUniform(target, probe, PageDelta.resyncByteCount)
            {
                found = true
                resyncPosition = probe
                break
            }
            probe += 1
        }
        probeBudget -= max(min(probe, end) - start + 1, 1)
        probedThrough = max(probedThrough, min(probe, end))
        probedResync = found ? probe : nil
        stretchResyncs = found
        return found
    }

    private static func isUniform(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ count: Int) -> Bool {
        let first = bytes[start]
        for offset in 1..<count where bytes[start + offset] != first { return false }
        return true
    }

    private func copy(shift: Int) -> Candidate? {
        let source = position + shift
        guard source >= 0, source < base.count, target[position] == base[source] else { return nil }
        let length = Self.matchLength(target, position, base, source, limit: min(target.count - position, base.count - source))
        return Candidate(operation: .copy, byteCount: length, shift: shift)
    }

    /// How many bytes from `a[i]` equal those from `b[j]`, at most `limit`; 8 bytes at a time.
    static func matchLength(
        _ a: UnsafeRawBufferPointer, _ i: Int, _ b: UnsafeRawBufferPointer, _ j: Int, limit: Int
    ) -> Int {
        let left = a.baseAddress! + i
        let right = b.baseAddress! + j
        var length = 0
        // 16 bytes a step while both words match (most of a page that changed in one place).
        while limit - length >= 16 {
            let first = left.loadUnaligned(fromByteOffset: length, as: UInt64.self)
                ^ right.loadUnaligned(fromByteOffset: length, as: UInt64.self)
            let second = left.loadUnaligned(fromByteOffset: length + 8, as: UInt64.self)
                ^ right.loadUnaligned(fromByteOffset: length + 8, as: UInt64.self)
            if first | second != 0 { break }
            length += 16
        }
        while limit - length >= 8 {
            let difference = UInt64(littleEndian: left.loadUnaligned(fromByteOffset: length, as: UInt64.self))
                ^ UInt64(littleEndian: right.loadUnaligned(fromByteOffset: length, as: UInt64.self))
            if difference != 0 { return length + difference.trailingZeroBitCount / 8 }
            length += 8
        }
        while length < limit && left.load(fromByteOffset: length, as: UInt8.self) == right.load(fromByteOffset: length, as: UInt8.self) {
            length += 1
        }
        return length
    }

    /// Moves an operation's start back over pending literal bytes it covers too: the index
    /// holds only every ``BaseIndex/stride``th base position and the search steps over bytes
    /// in a stretch without matches, so a copy is often found a little late.
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
        guard target.count - position >= 4 else { return nil }
        let value = target[position]
        guard target[position + 1] == value, target[position + 2] == value, target[position + 3] == value else { return nil }
        var length = 4
        while position + length < target.count && target[position + length] == value { length += 1 }
        return Candidate(operation: .fill, byteCount: length, fillByte: value)
    }

    /// Words of the base at `shift`, each differing from the target's by one nonzero constant.
    private func adjustedCopy(shift: Int) -> Candidate? {
        let source = position + shift
        guard source >= 0 else { return nil }
        let limit = min(target.count - position, base.count - source) / 2
        guard limit >= 2 else { return nil }
        let addend = word(target, position) &- word(base, source)
        // Offsets inside one page differ by less than a page; other words rarely do.
        guard addend != 0, word(target, position + 2) &- word(base, source + 2) == addend,
            Int(Int16(bitPattern: addend)).magnitude < min(base.count, 1 << 15)
        else { return nil }
        var words = 2
        while words < limit && word(target, position + 2 * words) &- word(base, source + 2 * words) == addend { words += 1 }
        return Candidate(operation: .adjustedCopy, byteCount: 2 * words, shift: shift, addend: addend)
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
    static let windowByteCount = 4
    static let stride = 4
    private let mask: Int
    /// `heads[hash]`: the first base position with that hash, or −1; `next[position / stride]`:
    /// the next position with the same hash, or −1. One allocation holds both.
    private var table: [Int32]
    private let headCount: Int
    private let base: UnsafeRawBufferPointer

    init(_ base: UnsafeRawBufferPointer) {
        self.base = base
        var tableSize = 256
        while tableSize < base.count / Self.stride { tableSize <<= 1 }
        mask = tableSize - 1
        headCount = tableSize
        let slotCount = base.count / Self.stride + 1
        table = [Int32](repeating: -1, count: tableSize + slotCount)
        guard base.count >= Self.windowByteCount else { return }
        let last = (base.count - Self.windowByteCount) / Self.stride * Self.stride
        let mask = self.mask
        let headCount = self.headCount
        table.withUnsafeMutableBufferPointer { table in
            for position in Swift.stride(from: last, through: 0, by: -Self.stride) {
                guard let hash = Self.hash(base, position, mask: mask) else { continue }
                table[headCount + position / Self.stride] = table[hash]
                table[hash] = Int32(position)
            }
        }
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer, _ position: Int, mask: Int) -> Int? {
        let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self))
        if word == (word & 0xFF) &* 0x0101_0101 { return nil }
        return Int((word &* 0x9E37_79B1) >> 12) & mask
    }

    /// Calls `body` with up to `limit` base positions whose window equals the target's at
    /// `position` (hash collisions are left out).
    func forEachCandidate(_ target: UnsafeRawBufferPointer, at position: Int, limit: Int, _ body: (Int) -> Void) {
        guard position + Self.windowByteCount <= target.count, let hash = Self.hash(target, position, mask: mask) else {
            return
        }
        let window = target.loadUnaligned(fromByteOffset: position, as: UInt32.self)
        table.withUnsafeBufferPointer { table in
            var candidate = table[hash]
            var seen = 0
            while candidate >= 0 && seen < limit {
                seen += 1
                let source = Int(candidate)
                candidate = table[headCount + source / Self.stride]
                guard window == base.loadUnaligned(fromByteOffset: source, as: UInt32.self) else { continue }
                body(source)
            }
        }
    }
}

/// Appends delta fields.
struct DeltaWriter {
    private(set) var bytes: [UInt8] = []

    mutating func reserve(_ capacity: Int) { bytes.reserveCapacity(capacity) }

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
