// The lock file beside a store: shared words that let processes notice each other's commits.
internal import ChronoAtomics

/// Words the processes sharing one store keep in a small mapped file (`STORE.lock`, beside the
/// store's resolved path).
///
/// Layout (native byte order: it never leaves this machine; 4096 bytes, the rest reserved):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | change counter: bumped after every published commit, sync and verified mark |
/// | 8 | 8 | transaction floor: the highest transaction id any writer has begun |
/// | 16 | 8 | identity of the machine boot whose floor this is |
/// | 24 | 8 | sync failures: bumped when a writer's sync fails (other processes then latch too) |
/// | 32 | 8 | device of the data file these words describe |
/// | 40 | 8 | inode of the data file these words describe |
/// | 48 | 8 | synced sequence: the highest header-slot sequence whose writer's sync succeeded |
/// | 56 | 8 | reserved (0) |
/// | 64 + 16·i | 8 | reader slot i: owner process id (informational; format-1 libraries read it) |
/// | 72 + 16·i | 8 | reader slot i: oldest root the owner handle's readers may read (0 = none) |
///
/// There are (4096 − 64) / 16 = 252 reader slots. A read-write handle owns one slot for its
/// life: it holds an exclusive byte-range lock on byte 2^40 + i of this file (an
/// open-file-description lock on Linux), which the kernel drops when the handle closes or its
/// process dies. A slot's pin counts only while that lock is held, so a dead process, a reused
/// process id, another PID namespace or a reboot never leaves a pin behind. Pins are plain
/// atomic stores, so a read transaction makes no system call.
///
/// Every word is read and written with sequentially consistent atomics. The writer lock is on the
/// data file itself (``FileLocks``), so it follows the file, not its name. The file is created
/// whole (written under a temporary name, then linked into place) and never removed, since
/// another process may be opening it at the same moment.
/// `@unchecked Sendable`: the mapping is shared memory by design; every access is atomic.
package final class CoordinationFile: @unchecked Sendable {
    package static let byteCount = 4096
    static let counterOffset = 0
    static let transactionFloorOffset = 8
    static let bootOffset = 16
    static let syncFailureOffset = 24
    static let deviceOffset = 32
    static let inodeOffset = 40
    static let syncedSequenceOffset = 48
    static let firstSlotOffset = 64
    static let slotByteCount = 16
    package static let slotCount = (byteCount - firstSlotOffset) / slotByteCount
    /// Slot i's liveness lock is on byte `livenessBase + i` (past the end: locks need no bytes).
    static let livenessBase: Int64 = 1 << 40

    package let path: String
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    let isWritable: Bool
    /// The reader slot this handle owns (read-write handles only).
    private(set) var slotIndex: Int?

    /// Opens the lock file at `path` for the data file `identity`, creating it whole if missing.
    /// With `readOnly`, opens an existing one for reading only and returns nil when there is none.
    /// - Throws: ``IOError`` (ENOSPC on a full disk, EROFS on read-only media, ...).
    package static func open(path: String, identity: FileIdentity, readOnly: Bool) throws -> CoordinationFile? {
        if readOnly {
            let descriptor = Platform.open(path, flags: Platform.readOnly | Platform.closeOnExec)
            guard descriptor >= 0 else { return nil }
            guard (Platform.fileSize(descriptor) ?? 0) >= Int64(byteCount),
                let mapping = Platform.mapShared(descriptor, byteCount: byteCount, writable: false)
            else {
                _ = Platform.close(descriptor)
                return nil
            }
            return CoordinationFile(path: path, descriptor: descriptor, mapping: mapping, writable: false)
        }
        if !Platform.fileExists(path) { try createWhole(at: path) }
        let descriptor = Platform.open(path, flags: Platform.readWrite | Platform.closeOnExec)
        guard descriptor >= 0 else { throw IOError(operation: "open", path: path, code: Platform.lastError) }
        guard (Platform.fileSize(descriptor) ?? 0) >= Int64(byteCount),
            let mapping = Platform.mapShared(descriptor, byteCount: byteCount)
        else {
            let code = (Platform.fileSize(descriptor) ?? 0) >= Int64(byteCount) ? Platform.lastError : Platform.ioFailure
            _ = Platform.close(descriptor)
            throw IOError(operation: "mmap", path: path, code: code)
        }
        let file = CoordinationFile(path: path, descriptor: descriptor, mapping: mapping, writable: true)
        file.adopt(identity)
        try file.claimSlot()
        return file
    }

    /// Writes a zeroed lock file under a temporary name and links it into place, so no process
    /// ever maps a short file (a sparse file on a full disk faults on first touch: SIGBUS).
    private static func createWhole(at path: String) throws {
        var generator = SystemRandomNumberGenerator()
        let temporary = path + ".new-\(UInt32.random(in: 0...UInt32.max, using: &generator))"
        let descriptor = Platform.open(
            temporary, flags: Platform.readWrite | Platform.create | Platform.exclusiveCreate | Platform.closeOnExec)
        guard descriptor >= 0 else { throw IOError(operation: "open", path: temporary, code: Platform.lastError) }
        defer { _ = Platform.removeFile(temporary) }
        let zeros = [UInt8](repeating: 0, count: byteCount)
        var written = 0
        while written < byteCount {
            let count = zeros.withUnsafeBytes { Platform.pwrite(descriptor, $0.baseAddress! + written, byteCount - written, Int64(written)) }
            guard count > 0 else {
                let code = count == 0 ? Platform.noSpace : Platform.lastError
                _ = Platform.close(descriptor)
                throw IOError(operation: "write", path: path, code: code)
            }
            written += count
        }
        _ = Platform.close(descriptor)
        if Platform.link(temporary, path) != 0 && Platform.lastError != Platform.alreadyExists {
            throw IOError(operation: "link", path: path, code: Platform.lastError)
        }
    }

    private init(path: String, descriptor: Int32, mapping: UnsafeMutableRawPointer, writable: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.mapping = mapping
        self.isWritable = writable
    }

    deinit {
        Platform.unmap(mapping, byteCount: Self.byteCount)
        _ = Platform.close(descriptor)
    }

    private func word(_ offset: Int) -> UnsafeMutablePointer<UInt64> {
        (mapping + offset).assumingMemoryBound(to: UInt64.self)
    }

    private func load(_ offset: Int) -> UInt64 { chrono_atomic_load(word(offset)) }

    /// A lock file last used for another data file at this path (the store was replaced or
    /// recreated) describes nothing about this one: forget its failures.
    private func adopt(_ identity: FileIdentity) {
        let device = load(Self.deviceOffset)
        let inode = load(Self.inodeOffset)
        guard device != identity.device || inode != identity.inode else { return }
        if device == 0 && inode == 0 {
            // A new lock file: its words are zero already. Several first openers may race here;
            // none may reset what another already recorded.
            _ = chrono_atomic_compare_exchange(word(Self.deviceOffset), 0, identity.device)
            _ = chrono_atomic_compare_exchange(word(Self.inodeOffset), 0, identity.inode)
            return
        }
        chrono_atomic_store(word(Self.syncFailureOffset), 0)
        chrono_atomic_store(word(Self.syncedSequenceOffset), 0)
        chrono_atomic_store(word(Self.deviceOffset), identity.device)
        chrono_atomic_store(word(Self.inodeOffset), identity.inode)
        _ = chrono_atomic_add(word(Self.counterOffset), 1)
    }

    // MARK: - Compatibility writer lock

    /// Takes `flock` on the lock file, as format-1 processes did for their writer lock, so an
    /// older process sharing the store still excludes this one. Call after ``FileLocks/lockWriter()``.
    package func lockWriter() throws {
        guard isWritable else { return }
        guard Platform.lockFile(descriptor, exclusive: true, wait: true) == 0 else {
            throw IOError(operation: "flock", path: path, code: Platform.lastError)
        }
    }

    /// Takes the writer `flock` if nobody holds it; returns whether it did.
    package func tryLockWriter() throws -> Bool {
        guard isWritable else { return true }
        if Platform.lockFile(descriptor, exclusive: true, wait: false) == 0 { return true }
        let code = Platform.lastError
        if code == Platform.wouldBlock { return false }
        throw IOError(operation: "flock", path: path, code: code)
    }

    package func unlockWriter() {
        guard isWritable else { return }
        _ = Platform.unlockFile(descriptor)
    }

    // MARK: - Shared words

    /// The change counter: differs from a remembered value once another commit was published.
    package var changeCounter: UInt64 { load(Self.counterOffset) }

    /// Bumps the change counter after publishing a commit.
    package func bumpChangeCounter() {
        guard isWritable else { return }
        _ = chrono_atomic_add(word(Self.counterOffset), 1)
    }

    /// The highest transaction id any writer has begun.
    package var transactionFloor: UInt64 { load(Self.transactionFloorOffset) }

    /// Records that a writer began transaction `id`.
    package func raiseTransactionFloor(_ id: UInt64) {
        guard isWritable else { return }
        _ = chrono_atomic_raise(word(Self.transactionFloorOffset), id)
    }

    /// Whether the floor was last raised during this boot of the machine, so it covers every id
    /// a writer (even one that crashed) has begun.
    package var continuesThisBoot: Bool {
        let boot = Platform.bootIdentity
        return boot != 0 && load(Self.bootOffset) == boot
    }

    /// For the first opener after a reboot (or of a new lock file): raises the floor past every
    /// id a lost commit can have used, then records this boot, in that order, so a process that
    /// sees this boot recorded also sees the raised floor.
    package func beginBoot(floorAtLeast floor: UInt64) {
        guard isWritable else { return }
        let recorded = load(Self.bootOffset)
        let boot = Platform.bootIdentity
        guard boot == 0 || recorded != boot else { return }
        _ = chrono_atomic_raise(word(Self.transactionFloorOffset), floor)
        _ = chrono_atomic_compare_exchange(word(Self.bootOffset), recorded, boot)
    }

    /// How many syncs of this store have failed (in any process) since the lock file was made.
    package var syncFailureCount: UInt64 { load(Self.syncFailureOffset) }

    /// Records a failed sync, so every process sharing the store stops writing.
    package func recordSyncFailure() {
        guard isWritable else { return }
        _ = chrono_atomic_add(word(Self.syncFailureOffset), 1)
        _ = chrono_atomic_add(word(Self.counterOffset), 1)
    }

    /// The highest header-slot sequence whose writer's sync succeeded. A slot marked "sync
    /// pending" with a higher sequence belongs to a commit still syncing, or one whose sync
    /// failed or whose writer died: it must not be adopted as it stands.
    package var syncedSequence: UInt64 { load(Self.syncedSequenceOffset) }

    /// Records that the sync covering header-slot `sequence` succeeded.
    package func recordSynced(sequence: UInt64) {
        guard isWritable else { return }
        _ = chrono_atomic_raise(word(Self.syncedSequenceOffset), sequence)
    }

    // MARK: - Reader slots

    /// Claims the first slot whose liveness lock nobody holds; its words are stale, so reset.
    private func claimSlot() throws {
        for index in 0..<Self.slotCount {
            let byte = Self.livenessBase + Int64(index)
            if Platform.rangeLock(descriptor, start: byte, length: 1, kind: .exclusive, wait: false) == 0 {
                chrono_atomic_store(word(slotOffset(index) + 8), 0)
                chrono_atomic_store(word(slotOffset(index)), UInt64(UInt32(bitPattern: Platform.processIdentifier)))
                slotIndex = index
                return
            }
            let code = Platform.lastError
            guard code == Platform.tryAgain || code == Platform.accessDenied else {
                throw IOError(operation: "fcntl(reader slot)", path: path, code: code)
            }
        }
        throw StoreError.tooManyProcesses(limit: Self.slotCount)
    }

    private func slotOffset(_ index: Int) -> Int { Self.firstSlotOffset + index * Self.slotByteCount }

    /// Advertises the oldest root this handle's readers may read (0: none). One atomic store.
    package func advertiseOldestRead(_ transaction: UInt64) {
        guard let slotIndex else { return }
        chrono_atomic_store(word(slotOffset(slotIndex) + 8), transaction)
    }

    /// The oldest root advertised by any other live handle, or nil. Costs one lock query per
    /// slot that holds a pin.
    package func oldestReadByOthers() throws -> UInt64? {
        var oldest: UInt64?
        for index in 0..<Self.slotCount where index != slotIndex {
            let transaction = load(slotOffset(index) + 8)
            guard transaction != 0, oldest.map({ transaction < $0 }) ?? true else { continue }
            guard let holder = Platform.rangeLockHolder(descriptor, start: Self.livenessBase + Int64(index), length: 1) else {
                throw IOError(operation: "fcntl(test reader slot)", path: path, code: Platform.lastError)
            }
            if holder >= 0 { oldest = transaction }
        }
        return oldest
    }

    /// Clears this handle's pin (the store was closed); the slot is freed when the file closes.
    package func releaseSlot() {
        advertiseOldestRead(0)
    }

    /// A full fence between publishing a pin and reading the change counter again.
    package func fence() { chrono_atomic_fence() }
}
