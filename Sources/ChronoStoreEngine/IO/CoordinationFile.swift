// The lock file beside a store: the cross-process writer lock, a change counter and reader slots.

/// Coordinates the processes that share one store through a small lock file (`STORE.lock`).
///
/// Layout of the mapped file (native byte order: it never leaves this machine; 4096 bytes):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | change counter: bumped after every published commit |
/// | 8 | 8 | highest transaction id any writer has begun (ids are never reused) |
/// | 16 | 8 | identity of the machine boot that last wrote this file |
/// | 24 | 40 | reserved |
/// | 64 + 16·i | 8 | slot i: process id of its owner (0 = free) |
/// | 72 + 16·i | 8 | slot i: oldest transaction that process may still be reading (0 = none) |
///
/// The writer lock is `flock(LOCK_EX)` on the lock file. Each open store claims one slot while
/// holding that lock; a slot whose process no longer exists is free again.
/// `@unchecked Sendable`: the mapping is shared memory by design; every field is an aligned
/// 8-byte word read and written whole, and slots are claimed only under the file lock.
package final class CoordinationFile: @unchecked Sendable {
    package static let byteCount = 4096
    static let counterOffset = 0
    static let firstSlotOffset = 64
    static let slotByteCount = 16
    static let slotCount = (byteCount - firstSlotOffset) / slotByteCount

    package let path: String
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    private(set) var slotIndex: Int?

    /// Opens or creates the lock file at `path` and claims a reader slot.
    package init(path: String) throws {
        let descriptor = Platform.open(path, flags: Platform.readWrite | Platform.create | Platform.closeOnExec)
        guard descriptor >= 0 else { throw IOError(operation: "open", path: path, code: Platform.lastError) }
        if (Platform.fileSize(descriptor) ?? 0) < Int64(Self.byteCount) {
            guard Platform.truncate(descriptor, Int64(Self.byteCount)) == 0 else {
                let code = Platform.lastError
                _ = Platform.close(descriptor)
                throw IOError(operation: "ftruncate", path: path, code: code)
            }
        }
        guard let mapping = Platform.mapShared(descriptor, byteCount: Self.byteCount) else {
            let code = Platform.lastError
            _ = Platform.close(descriptor)
            throw IOError(operation: "mmap", path: path, code: code)
        }
        self.path = path
        self.descriptor = descriptor
        self.mapping = mapping
        try claimSlot()
        try lockWriter()
        defer { unlockWriter() }
        let boot = Platform.bootIdentity
        let recorded = word(at: Self.bootOffset)
        continuesThisBoot = boot != 0 && recorded.pointee == boot
        if !continuesThisBoot {
            recorded.pointee = boot
            word(at: Self.transactionFloorOffset).pointee = 0
        }
    }

    deinit {
        releaseSlot()
        Platform.unmap(mapping, byteCount: Self.byteCount)
        _ = Platform.close(descriptor)
    }

    // Plain aligned 8-byte loads and stores: other processes see them whole.
    private func word(at offset: Int) -> UnsafeMutablePointer<UInt64> {
        (mapping + offset).assumingMemoryBound(to: UInt64.self)
    }

    private func slotOffset(_ index: Int) -> Int { Self.firstSlotOffset + index * Self.slotByteCount }

    /// Takes the cross-process writer lock, waiting for another process to finish.
    package func lockWriter() throws {
        guard Platform.lockFile(descriptor, exclusive: true, wait: true) == 0 else {
            throw IOError(operation: "flock", path: path, code: Platform.lastError)
        }
    }

    /// Takes the writer lock if no other process holds it; returns whether it did.
    package func tryLockWriter() throws -> Bool {
        if Platform.lockFile(descriptor, exclusive: true, wait: false) == 0 { return true }
        let code = Platform.lastError
        if code == Platform.wouldBlock { return false }
        throw IOError(operation: "flock", path: path, code: code)
    }

    package func unlockWriter() { _ = Platform.unlockFile(descriptor) }

    /// The change counter: differs from a remembered value once another commit was published.
    package var changeCounter: UInt64 { word(at: Self.counterOffset).pointee }

    static let transactionFloorOffset = 8
    static let bootOffset = 16

    /// Whether this file was already in use during this boot of the machine, so its transaction
    /// floor covers every id a writer (even one that crashed) has begun. False after a reboot
    /// (a power loss may have lost commits the floor never saw) or for a new lock file.
    private(set) package var continuesThisBoot = false

    /// The highest transaction id any writer has begun.
    package var transactionFloor: UInt64 { word(at: Self.transactionFloorOffset).pointee }

    /// Records that a writer began transaction `id`; call with the writer lock held.
    package func raiseTransactionFloor(_ id: UInt64) {
        let pointer = word(at: Self.transactionFloorOffset)
        if pointer.pointee < id { pointer.pointee = id }
    }

    /// Bumps the change counter; call with the writer lock held, after publishing a commit.
    package func bumpChangeCounter() {
        word(at: Self.counterOffset).pointee &+= 1
    }

    /// Advertises the oldest transaction this process may read (0: none).
    package func advertiseOldestRead(_ transaction: UInt64) {
        guard let slotIndex else { return }
        let pointer = word(at: slotOffset(slotIndex) + 8)
        if pointer.pointee != transaction { pointer.pointee = transaction }
    }

    /// The oldest transaction advertised by any other live process, or nil.
    package func oldestReadByOtherProcesses() -> UInt64? {
        var oldest: UInt64?
        for index in 0..<Self.slotCount where index != slotIndex {
            let owner = Int32(truncatingIfNeeded: word(at: slotOffset(index)).pointee)
            guard owner != 0 else { continue }
            let transaction = word(at: slotOffset(index) + 8).pointee
            guard transaction != 0, Platform.processExists(owner) else { continue }
            oldest = min(oldest ?? transaction, transaction)
        }
        return oldest
    }

    /// Gives this process's slot back (when the store is closed).
    package func releaseSlot() {
        guard let slotIndex else { return }
        word(at: slotOffset(slotIndex) + 8).pointee = 0
        word(at: slotOffset(slotIndex)).pointee = 0
        self.slotIndex = nil
    }

    /// Whether a slot other than this one belongs to a live process (the store is open elsewhere).
    package func hasOtherLiveOwners() -> Bool {
        for index in 0..<Self.slotCount where index != slotIndex {
            let owner = Int32(truncatingIfNeeded: word(at: slotOffset(index)).pointee)
            if owner != 0 && Platform.processExists(owner) { return true }
        }
        return false
    }

    private func claimSlot() throws {
        try lockWriter()
        defer { unlockWriter() }
        let me = UInt64(UInt32(bitPattern: Platform.processID))
        for index in 0..<Self.slotCount {
            let owner = word(at: slotOffset(index))
            let ownerID = Int32(truncatingIfNeeded: owner.pointee)
            if ownerID == 0 || !Platform.processExists(ownerID) {
                word(at: slotOffset(index) + 8).pointee = 0
                owner.pointee = me
                slotIndex = index
                return
            }
        }
        // Every slot is taken by a live process: run without advertising reads. Writers in other
        // processes then cannot see this process's readers, so refuse rather than risk it.
        throw StoreError.tooManyProcesses(limit: Self.slotCount)
    }
}
