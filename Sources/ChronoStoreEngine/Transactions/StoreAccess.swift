// How an open store reaches its data file: locks, the lock file, identity and mode.

/// What ``Store`` needs besides the file to share it with other processes safely.
struct StoreAccess {
    /// The mapped lock file (nil for in-memory files, or a read-only open beside none).
    var coordination: CoordinationFile?
    /// Byte-range locks on the data file (nil for in-memory files).
    var fileLocks: FileLocks?
    /// The data file's device and inode (nil for in-memory files).
    var identity: FileIdentity?
    /// The store's path with symbolic links resolved.
    var resolvedPath: String?
    var isReadOnly = false
    /// The data file had more than one hard link when it was opened.
    var hasSeveralNames = false
}
