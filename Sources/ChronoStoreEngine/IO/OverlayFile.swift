// A file opened read-only, seen through an in-memory layer that takes writes and never reaches the file.

/// Opening a store runs recovery, which may write (it marks the chosen header slot, settles the
/// file length). A backup is opened read-only, so a plain copy of a store that was not closed
/// cleanly could not be opened; through this layer recovery's writes stay in memory and the
/// copy on disk is never changed. `synchronize()` does nothing: nothing here is meant to last.
///
/// `@unchecked Sendable`: `blocks` and `length` are guarded by `lock`.
package final class OverlayFile: StoreFile, @unchecked Sendable {
    private static let blockByteCount = 4096

    private let base: any StoreFile
    private let lock = Lock()
    /// Blocks written through the layer, by block number, each `blockByteCount` long.
    private var blocks: [UInt64: [UInt8]] = [:]
    private var length: UInt64
    /// How much of the base file shows through: a truncation hides what lay beyond it.
    private var baseVisible: UInt64

    package var name: String { base.name }

    package init(over base: any StoreFile) throws {
        self.base = base
        length = try base.byteCount()
        baseVisible = length
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try lock.withLock {
            guard offset < length else { return 0 }
            let count = Int(min(UInt64(buffer.count), length - offset))
            var done = 0
            while done < count {
                let position = offset + UInt64(done)
                let (block, within) = Self.locate(position)
                let take = min(count - done, Self.blockByteCount - within)
                let target = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + take)])
                if let written = blocks[block] {
                    written.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[within..<(within + take)])) }
                } else {
                    try readBase(into: target, at: position)
                }
                done += take
            }
            return count
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try lock.withLock {
            var done = 0
            while done < bytes.count {
                let position = offset + UInt64(done)
                let (block, within) = Self.locate(position)
                let take = min(bytes.count - done, Self.blockByteCount - within)
                var contents = try blocks[block] ?? baseBlock(block)
                contents.withUnsafeMutableBytes { target in
                    UnsafeMutableRawBufferPointer(rebasing: target[within..<(within + take)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[done..<(done + take)]))
                }
                blocks[block] = contents
                done += take
            }
            length = max(length, offset + UInt64(bytes.count))
        }
    }

    package func synchronize() throws {}

    package func byteCount() throws -> UInt64 { lock.withLock { length } }

    package func truncate(to byteCount: UInt64) throws {
        lock.withLock {
            if byteCount < length {
                // Bytes cut off read as zeros if the file grows again.
                baseVisible = min(baseVisible, byteCount)
                let (lastBlock, within) = Self.locate(byteCount)
                blocks = blocks.filter { $0.key <= lastBlock }
                if var contents = blocks[lastBlock] {
                    for index in within..<Self.blockByteCount { contents[index] = 0 }
                    blocks[lastBlock] = contents
                }
            }
            length = byteCount
        }
    }

    private static func locate(_ position: UInt64) -> (block: UInt64, within: Int) {
        (position / UInt64(blockByteCount), Int(position % UInt64(blockByteCount)))
    }

    /// A block as the base file holds it, zeros past its end.
    private func baseBlock(_ block: UInt64) throws -> [UInt8] {
        var contents = [UInt8](repeating: 0, count: Self.blockByteCount)
        try contents.withUnsafeMutableBytes { try readBase(into: $0, at: block * UInt64(Self.blockByteCount)) }
        return contents
    }

    /// Reads from the base file; bytes beyond its visible end read as zeros.
    private func readBase(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        let visible = offset < baseVisible ? Int(min(UInt64(buffer.count), baseVisible - offset)) : 0
        while done < visible {
            let count = try base.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done..<visible]), at: offset + UInt64(done))
            if count == 0 { break }
            done += count
        }
        if done < buffer.count { UnsafeMutableRawBufferPointer(rebasing: buffer[done...]).initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
