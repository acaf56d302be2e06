// Byte-range locks on the data file itself: the writer lock, "open here" marks and reader pins.

/// The locks processes take on a store's data file. They live on the file's inode, so every
/// name of the store (hard links, symbolic links) shares them, and the kernel drops them when
/// the holder closes the file or dies: no process ids, nothing left behind by a crash or a reboot.
///
/// The locked bytes lie far past any real data (locks need no bytes to exist):
///
/// | byte | lock | meaning |
/// |---|---|---|
/// | 2^62 | shared | this open file has the store open |
/// | 2^62 | exclusive | the store is being replaced (`Store.replaceStore`); nobody has it open |
/// | 2^62 + 1 | exclusive | the writer lock |
/// | 2^62 + 16 + t | shared | a reader of this open file may read root t or newer |
///
/// On Linux these are open-file-description locks, so two `Store` values in one process
/// exclude each other like two processes. On Darwin they are process-owned `fcntl` locks (see
/// Docs/Durability.md for what that costs).
/// `@unchecked Sendable`: it holds only the descriptor; the kernel serialises the locks, and
/// `pinnedTransaction` is guarded by `lock`.
package final class FileLocks: @unchecked Sendable {
    static let openByte: Int64 = 1 << 62
    static let writerByte: Int64 = openByte + 1
    static let firstPinByte: Int64 = openByte + 16
    /// Transactions up to this id can be pinned (ids stay far below it).
    static let pinnableTransactionLimit: UInt64 = 1 << 61

    private let descriptor: Int32
    private let path: String
    private let lock = Lock()
    private var pinnedTransaction: UInt64 = 0

    /// Locks on the file open as `file` (the locks last as long as it stays open).
    package init(file: PosixFile) {
        descriptor = file.descriptor
        path = file.name
    }

    private func failure(_ operation: String) -> IOError {
        IOError(operation: operation, path: path, code: Platform.lastError)
    }

    private var isBusy: Bool { Platform.lastError == Platform.tryAgain || Platform.lastError == Platform.accessDenied }

    // MARK: - Open marks

    /// Marks the store open through this file, waiting while a replacement holds it.
    package func markOpen() throws {
        guard Platform.rangeLock(descriptor, start: Self.openByte, length: 1, kind: .shared, wait: true) == 0 else {
            throw failure("fcntl(open mark)")
        }
    }

    /// Drops this open file's open mark and reader pin (the store was closed).
    package func markClosed() {
        try? pinOldestRead(0)
        _ = Platform.rangeLock(descriptor, start: Self.openByte, length: 1, kind: .unlock, wait: false)
    }

    /// Takes the open byte exclusively, if no other open file has the store open.
    package func tryMarkReplacing() throws -> Bool {
        if Platform.rangeLock(descriptor, start: Self.openByte, length: 1, kind: .exclusive, wait: false) == 0 { return true }
        if isBusy { return false }
        throw failure("fcntl(replace mark)")
    }

    /// Whether another open file (this process's or another's) has the store open.
    package func isOpenElsewhere() throws -> Bool {
        guard let holder = Platform.rangeLockHolder(descriptor, start: Self.openByte, length: 1) else {
            throw failure("fcntl(test open mark)")
        }
        return holder >= 0
    }

    // MARK: - The writer lock

    /// Takes the writer lock, waiting for the current writer to finish.
    package func lockWriter() throws {
        guard Platform.rangeLock(descriptor, start: Self.writerByte, length: 1, kind: .exclusive, wait: true) == 0 else {
            throw failure("fcntl(writer lock)")
        }
    }

    /// Takes the writer lock if nobody holds it; returns whether it did.
    package func tryLockWriter() throws -> Bool {
        if Platform.rangeLock(descriptor, start: Self.writerByte, length: 1, kind: .exclusive, wait: false) == 0 { return true }
        if isBusy { return false }
        throw failure("fcntl(writer lock)")
    }

    package func unlockWriter() {
        _ = Platform.rangeLock(descriptor, start: Self.writerByte, length: 1, kind: .unlock, wait: false)
    }

    // MARK: - Reader pins

    /// Advertises that readers of this open file may read root `transaction` or newer (0: none).
    /// The new pin is taken before the old one is dropped, so the range is never left unpinned.
    package func pinOldestRead(_ transaction: UInt64) throws {
        try lock.withLock {
            guard transaction != pinnedTransaction, transaction < Self.pinnableTransactionLimit else { return }
            if transaction != 0 {
                let byte = Self.firstPinByte + Int64(transaction)
                guard Platform.rangeLock(descriptor, start: byte, length: 1, kind: .shared, wait: false) == 0 else {
                    throw failure("fcntl(reader pin)")
                }
            }
            if pinnedTransaction != 0 {
                let byte = Self.firstPinByte + Int64(pinnedTransaction)
                _ = Platform.rangeLock(descriptor, start: byte, length: 1, kind: .unlock, wait: false)
            }
            pinnedTransaction = transaction
        }
    }

    /// The oldest root any other open file's readers may read, or nil.
    ///
    /// The kernel reports one conflicting lock at a time, not the lowest, so each answer narrows
    /// the range below it: O(number of distinct pins below the first answer) calls, usually 1–2.
    package func oldestReadElsewhere() throws -> UInt64? {
        var limit = Int64(Self.pinnableTransactionLimit)
        var oldest: UInt64?
        while limit > 1 {
            guard let holder = Platform.rangeLockHolder(descriptor, start: Self.firstPinByte + 1, length: limit - 1) else {
                throw failure("fcntl(test reader pins)")
            }
            guard holder >= 0 else { break }
            let transaction = holder - Self.firstPinByte
            oldest = UInt64(transaction)
            limit = transaction
        }
        return oldest
    }
}
