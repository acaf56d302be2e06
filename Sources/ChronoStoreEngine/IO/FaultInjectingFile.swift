// An in-memory store file that can fail, crash and lose or tear unsynced writes, for tests.

/// An in-memory ``StoreFile`` that models a disk with a volatile write cache.
///
/// Writes are visible to reads at once but stay *pending* until ``synchronize()``. The file
/// can be told to crash after a number of operations (every later call throws), and
/// ``crashImage(using:)`` then builds what a disk might hold after power loss: each pending
/// write applied, dropped, or torn (each 512-byte sector written whole, in part, or not at all).
/// It can also fail a sync, to test the read-only latch.
///
/// `@unchecked Sendable`: all state is guarded by `lock`.
package final class FaultInjectingFile: StoreFile, @unchecked Sendable {
    private enum PendingOperation {
        case write(offset: Int, bytes: [UInt8])
        case truncate(byteCount: Int)
    }

    package let name: String
    private let lock = Lock()
    private var durable: [UInt8]
    private var current: [UInt8]
    private var pending: [PendingOperation] = []
    private var operationsBeforeCrash: Int?
    private var failingSyncs = 0
    private var failedSyncsLoseWrites = false
    private var syncHook: (() -> Void)?
    // Counted under `lock`: a packing commit's thread may use the file while a test reads them.
    private var crashed = false
    private var syncs = 0
    private var writes = 0
    private var truncates = 0
    private var reads = 0
    package var hasCrashed: Bool { lock.withLock { crashed } }
    package var syncCount: Int { lock.withLock { syncs } }
    package var writeCount: Int { lock.withLock { writes } }
    package var truncateCount: Int { lock.withLock { truncates } }
    package var readCount: Int { lock.withLock { reads } }

    /// A file whose durable and visible contents are `image`.
    package init(name: String = "memory", image: [UInt8] = []) {
        self.name = name
        self.durable = image
        self.current = image
    }

    /// Let `count` more writes, syncs or truncates succeed, then crash: the next one and every
    /// later call throws (`0` fails the very next operation); `nil` disarms.
    package func crash(afterOperations count: Int?) {
        lock.withLock { operationsBeforeCrash = count }
    }

    /// Makes the next `count` syncs fail with EIO. By default their writes stay pending (a later
    /// sync may still make them durable). With `losingWrites`, a failed sync drops them as Linux
    /// does after a writeback error: reads still see them (the cache keeps the pages, marked
    /// clean) but no later sync will ever write them; only writing them again does.
    package func failSyncs(_ count: Int, losingWrites: Bool = false) {
        lock.withLock {
            failingSyncs = count
            failedSyncsLoseWrites = losingWrites
        }
    }

    /// The bytes every read currently sees.
    package var visibleImage: [UInt8] { lock.withLock { current } }

    /// The bytes known durable: the state at the last successful sync.
    package var durableImage: [UInt8] { lock.withLock { durable } }

    /// How many writes and truncations have not been synced.
    package var pendingOperationCount: Int { lock.withLock { pending.count } }

    /// What the disk might hold after a power loss now: each pending operation, in order, is
    /// applied, dropped, or torn, as `generator` decides.
    package func crashImage(using generator: inout some RandomNumberGenerator) -> [UInt8] {
        let (base, operations) = lock.withLock { (durable, pending) }
        var image = base
        for operation in operations {
            switch operation {
            case .truncate(let byteCount):
                if Bool.random(using: &generator) { Self.resize(&image, to: byteCount) }
            case .write(let offset, let bytes):
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: Self.apply(bytes, at: offset, to: &image)
                case 1: break
                default: Self.tear(bytes, at: offset, into: &image, using: &generator)
                }
            }
        }
        return image
    }

    private static func tear(
        _ bytes: [UInt8], at offset: Int, into image: inout [UInt8],
        using generator: inout some RandomNumberGenerator
    ) {
        let sector = 512
        var start = 0
        while start < bytes.count {
            let end = min(start + sector, bytes.count)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0, 1: apply(Array(bytes[start..<end]), at: offset + start, to: &image)
            case 2: apply(Array(bytes[start..<(start + Int.random(in: 0...(end - start), using: &generator))]),
                          at: offset + start, to: &image)
            default:
                // Nothing reached this sector; a file that grows still grows with zeros.
                if image.count < offset + end { resize(&image, to: offset + end) }
            }
            start = end
        }
    }

    private static func apply(_ bytes: [UInt8], at offset: Int, to image: inout [UInt8]) {
        if image.count < offset + bytes.count { resize(&image, to: offset + bytes.count) }
        image.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    }

    private static func resize(_ image: inout [UInt8], to byteCount: Int) {
        if byteCount < image.count {
            image.removeSubrange(byteCount...)
        } else {
            image.append(contentsOf: repeatElement(0, count: byteCount - image.count))
        }
    }

    /// Counts one mutating operation; throws once the crash point is reached.
    private func tick(_ operation: String) throws {
        if crashed { throw IOError(operation: operation, path: name, code: IOError.injectedFailureCode) }
        if let remaining = operationsBeforeCrash {
            if remaining <= 0 {
                crashed = true
                throw IOError(operation: operation, path: name, code: IOError.injectedFailureCode)
            }
            operationsBeforeCrash = remaining - 1
        }
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try lock.withLock {
            if crashed { throw IOError(operation: "pread", path: name, code: IOError.injectedFailureCode) }
            reads += 1
            let start = Int(offset)
            guard start < current.count else { return 0 }
            let count = min(buffer.count, current.count - start)
            current.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
            }
            return count
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try lock.withLock {
            try tick("pwrite")
            let copy = [UInt8](bytes)
            writes += 1
            pending.append(.write(offset: Int(offset), bytes: copy))
            Self.apply(copy, at: Int(offset), to: &current)
        }
    }

    /// Runs `body` in the middle of every later sync, after the sync has started and before it
    /// returns, as another thread of the process would run while a real sync waits for the disk.
    /// Writes `body` makes are not covered by that sync: they stay pending. `nil` removes it.
    package func duringSyncs(_ body: (() -> Void)?) {
        lock.withLock { syncHook = body }
    }

    package func synchronize() throws {
        let (covered, hook) = try lock.withLock { () throws -> (Int, (() -> Void)?) in
            try tick("fdatasync")
            return (pending.count, syncHook)
        }
        hook?()
        try lock.withLock {
            // A crash while the sync waited: it never completed.
            if crashed { throw IOError(operation: "fdatasync", path: name, code: IOError.injectedFailureCode) }
            if failingSyncs > 0 {
                failingSyncs -= 1
                if failedSyncsLoseWrites { pending.removeFirst(min(covered, pending.count)) }
                throw IOError(operation: "fdatasync", path: name, code: IOError.injectedFailureCode)
            }
            // Only what was pending when the sync began reaches the disk: writes a failed sync
            // dropped stay lost, and writes made during the sync stay pending.
            for operation in pending.prefix(covered) {
                switch operation {
                case .write(let offset, let bytes): Self.apply(bytes, at: offset, to: &durable)
                case .truncate(let byteCount): Self.resize(&durable, to: byteCount)
                }
            }
            pending.removeFirst(min(covered, pending.count))
            syncs += 1
        }
    }

    package func byteCount() throws -> UInt64 {
        try lock.withLock {
            if crashed { throw IOError(operation: "fstat", path: name, code: IOError.injectedFailureCode) }
            return UInt64(current.count)
        }
    }

    package func truncate(to byteCount: UInt64) throws {
        try lock.withLock {
            try tick("ftruncate")
            truncates += 1
            pending.append(.truncate(byteCount: Int(byteCount)))
            Self.resize(&current, to: Int(byteCount))
        }
    }
}
