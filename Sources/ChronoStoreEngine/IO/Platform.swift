// The only place that names the C library: thin wrappers over the syscalls the engine uses.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#else
    #error("ChronoStore needs a POSIX C library")
#endif
internal import ChronoSystem

/// Thin, retrying wrappers over POSIX calls. Every syscall made by the engine goes through here.
enum Platform {
    /// Blocks the calling thread for about `microseconds` (a short wait between polls).
    static func pause(microseconds: UInt32) {
        _ = usleep(microseconds)
    }

    /// The calling thread's `errno`.
    static var lastError: Int32 { errno }

    static func open(_ path: String, flags: Int32, mode: UInt32 = 0o644) -> Int32 {
        while true {
            let descriptor = path.withCString { Foundationless.openFile($0, flags, mode_t(mode)) }
            if descriptor >= 0 || errno != EINTR { return descriptor }
        }
    }

    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            return Darwin.close(descriptor)
        #elseif canImport(Glibc)
            return Glibc.close(descriptor)
        #else
            return Musl.close(descriptor)
        #endif
    }

    static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: Int64) -> Int {
        while true {
            #if canImport(Darwin)
                let result = Darwin.pread(descriptor, buffer, count, off_t(offset))
            #elseif canImport(Glibc)
                let result = Glibc.pread(descriptor, buffer, count, off_t(offset))
            #else
                let result = Musl.pread(descriptor, buffer, count, off_t(offset))
            #endif
            if result >= 0 || errno != EINTR { return result }
        }
    }

    static func pwrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: Int64) -> Int {
        while true {
            #if canImport(Darwin)
                let result = Darwin.pwrite(descriptor, buffer, count, off_t(offset))
            #elseif canImport(Glibc)
                let result = Glibc.pwrite(descriptor, buffer, count, off_t(offset))
            #else
                let result = Musl.pwrite(descriptor, buffer, count, off_t(offset))
            #endif
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Makes written data durable: `F_FULLFSYNC` on Darwin (falling back to `fsync` where the
    /// file system refuses it), `fdatasync` elsewhere.
    static func synchronizeData(_ descriptor: Int32) -> Int32 {
        while true {
            #if canImport(Darwin)
                // Fall back to fsync only where the file system cannot do F_FULLFSYNC at all;
                // any other error is a failed sync.
                var result = fcntl(descriptor, F_FULLFSYNC)
                if result != 0 && (errno == ENOTSUP || errno == ENOTTY || errno == EINVAL) { result = fsync(descriptor) }
            #else
                let result = fdatasync(descriptor)
            #endif
            if result == 0 || errno != EINTR { return result }
        }
    }

    /// Makes a directory's entries durable (after creating or renaming a file in it).
    static func synchronizeDirectory(_ descriptor: Int32) -> Int32 {
        while true {
            let result = fsync(descriptor)
            if result == 0 || errno != EINTR { return result }
        }
    }

    /// The open file's length. Asks for the size alone (`statx` on Linux): see
    /// ``identity(atPath:)`` for what asking for its times costs each later commit.
    static func fileSize(_ descriptor: Int32) -> Int64? {
        var size: Int64 = 0
        guard chrono_descriptor_size(descriptor, &size) == 0 else { return nil }
        return size
    }

    static func truncate(_ descriptor: Int32, _ byteCount: Int64) -> Int32 {
        while true {
            let result = ftruncate(descriptor, off_t(byteCount))
            if result == 0 || errno != EINTR { return result }
        }
    }

    /// `flock`: whole-file advisory lock, owned by the open file description.
    static func lockFile(_ descriptor: Int32, exclusive: Bool, wait: Bool) -> Int32 {
        var operation = exclusive ? LOCK_EX : LOCK_SH
        if !wait { operation |= LOCK_NB }
        while true {
            let result = flock(descriptor, operation)
            if result == 0 || errno != EINTR { return result }
        }
    }

    static func unlockFile(_ descriptor: Int32) -> Int32 {
        flock(descriptor, LOCK_UN)
    }

    static func mapShared(_ descriptor: Int32, byteCount: Int, writable: Bool = true) -> UnsafeMutableRawPointer? {
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        let address = mmap(nil, byteCount, protection, MAP_SHARED, descriptor, 0)
        guard let address, address != MAP_FAILED else { return nil }
        return address
    }

    static func unmap(_ address: UnsafeMutableRawPointer, byteCount: Int) {
        _ = munmap(address, byteCount)
    }

    /// `count` zeroed `UInt64`s in an anonymous private mapping: the kernel supplies zero pages on
    /// first touch, so only the parts later written cost memory or time (`calloc` would write
    /// zeros over a block it reuses from its heap). Release with
    /// ``releaseZeroedWords(_:count:)``.
    static func zeroedWords(_ count: Int) -> UnsafeMutablePointer<UInt64>? {
        let byteCount = max(count, 1) * MemoryLayout<UInt64>.stride
        let address = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { return nil }
        return address.bindMemory(to: UInt64.self, capacity: max(count, 1))
    }

    static func releaseZeroedWords(_ words: UnsafeMutablePointer<UInt64>, count: Int) {
        _ = munmap(words, max(count, 1) * MemoryLayout<UInt64>.stride)
    }

    static var processIdentifier: Int32 { getpid() }

    /// The device and inode of an open file.
    static func identity(of descriptor: Int32) -> FileIdentity? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(truncatingIfNeeded: status.st_dev), inode: UInt64(truncatingIfNeeded: status.st_ino))
    }

    /// The number of hard links of an open file.
    static func linkCount(of descriptor: Int32) -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return Int(status.st_nlink)
    }

    /// The device and inode of the file a path names now (following symbolic links).
    ///
    /// Every write transaction asks this of the data file's path (has another process replaced
    /// the file?), so it must not ask for the file's times: since Linux 6.13, a file whose
    /// change time was read gets a fine-grained time at its next write, which dirties its
    /// inode, and on ext4 without a journal each `fdatasync` then also writes the inode's table
    /// block and waits for it. `chrono_path_identity` asks `statx` for the inode number only.
    static func identity(atPath path: String) -> FileIdentity? {
        var device: UInt64 = 0
        var inode: UInt64 = 0
        guard path.withCString({ chrono_path_identity($0, &device, &inode) }) == 0 else { return nil }
        return FileIdentity(device: device, inode: inode)
    }

    /// The absolute path with every symbolic link resolved, or nil when it cannot be resolved.
    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = path.withCString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Creates a second name for a file; fails with EEXIST rather than replace anything.
    static func link(_ source: String, _ destination: String) -> Int32 {
        source.withCString { from in destination.withCString { to in linkat(AT_FDCWD, from, AT_FDCWD, to, 0) } }
    }

    /// What a byte-range lock request asks for.
    enum RangeLockKind { case shared, exclusive, unlock }

    /// A byte-range lock owned by the open file description (Linux `F_OFD_SETLK`), so it
    /// follows the file's inode whatever name opened it and the kernel drops it when the last
    /// descriptor of that open file closes, or the process dies. On Darwin, which has no
    /// open-file-description locks, it is a process-owned `F_SETLK` lock.
    /// Returns 0, or -1 with `errno` set (EAGAIN/EACCES when `wait` is false and it is held).
    static func rangeLock(_ descriptor: Int32, start: Int64, length: Int64, kind: RangeLockKind, wait: Bool) -> Int32 {
        var request = rangeLockRequest(start: start, length: length, kind: kind)
        let command = wait ? rangeLockWaitCommand : rangeLockCommand
        while true {
            let result = fcntl(descriptor, command, &request)
            if result == 0 || errno != EINTR { return result }
        }
    }

    /// Where another open file holds a lock that conflicts with an exclusive lock on the range:
    /// the start of one such lock, `-1` when there is none, or nil with `errno` set on failure.
    static func rangeLockHolder(_ descriptor: Int32, start: Int64, length: Int64) -> Int64? {
        var request = rangeLockRequest(start: start, length: length, kind: .exclusive)
        guard fcntl(descriptor, rangeLockTestCommand, &request) == 0 else { return nil }
        if Int32(request.l_type) == Int32(F_UNLCK) { return -1 }
        return Int64(request.l_start)
    }

    private static func rangeLockRequest(start: Int64, length: Int64, kind: RangeLockKind) -> flock {
        var request = flock()
        switch kind {
        case .shared: request.l_type = numericCast(F_RDLCK)
        case .exclusive: request.l_type = numericCast(F_WRLCK)
        case .unlock: request.l_type = numericCast(F_UNLCK)
        }
        request.l_whence = numericCast(SEEK_SET)
        request.l_start = off_t(start)
        request.l_len = off_t(length)
        request.l_pid = 0
        return request
    }

    #if canImport(Darwin)
        private static let rangeLockTestCommand = F_GETLK
        private static let rangeLockCommand = F_SETLK
        private static let rangeLockWaitCommand = F_SETLKW
    #else
        // F_OFD_GETLK, F_OFD_SETLK and F_OFD_SETLKW (Linux 3.15 and later; the same on every
        // architecture). The C library declares them only under _GNU_SOURCE.
        private static let rangeLockTestCommand: Int32 = 36
        private static let rangeLockCommand: Int32 = 37
        private static let rangeLockWaitCommand: Int32 = 38
    #endif

    static func fileExists(_ path: String) -> Bool {
        var status = stat()
        return path.withCString { stat($0, &status) } == 0
    }

    static func removeFile(_ path: String) -> Int32 {
        path.withCString { unlink($0) }
    }

    static func rename(_ source: String, _ destination: String) -> Int32 {
        source.withCString { sourcePointer in
            destination.withCString { destinationPointer in
                #if canImport(Darwin)
                    Darwin.rename(sourcePointer, destinationPointer)
                #elseif canImport(Glibc)
                    Glibc.rename(sourcePointer, destinationPointer)
                #else
                    Musl.rename(sourcePointer, destinationPointer)
                #endif
            }
        }
    }

    /// Makes `destination` share `source`'s blocks where the file system can (FICLONE on Linux
    /// btrfs/xfs, clonefile on APFS); returns false where it cannot, leaving a plain copy to the caller.
    static func cloneFile(_ source: String, _ destination: String) -> Bool {
        #if canImport(Darwin)
            return source.withCString { from in destination.withCString { to in clonefile(from, to, 0) == 0 } }
        #elseif canImport(Glibc)
            let input = open(source, flags: readOnly | closeOnExec)
            guard input >= 0 else { return false }
            defer { _ = close(input) }
            let output = open(destination, flags: readWrite | create | exclusiveCreate | closeOnExec)
            guard output >= 0 else { return false }
            let ficlone: UInt = 0x4004_9409
            let cloned = ioctl(output, ficlone, input) == 0
            _ = close(output)
            if !cloned { _ = removeFile(destination) }
            return cloned
        #else
            return false
        #endif
    }

    /// The names in a directory (without "." and ".."), or nil when it cannot be read.
    static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = path.withCString({ opendir($0) }) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A value that differs from one boot of the machine to the next (0 when unknown): the boot
    /// id on Linux, the boot time on Darwin.
    static var bootIdentity: UInt64 {
        #if canImport(Darwin)
            var boot = timeval()
            var size = MemoryLayout<timeval>.size
            var name: [Int32] = [CTL_KERN, KERN_BOOTTIME]
            guard sysctl(&name, 2, &boot, &size, nil, 0) == 0 else { return 0 }
            return UInt64(boot.tv_sec) &* 1_000_000 &+ UInt64(boot.tv_usec)
        #else
            let descriptor = open("/proc/sys/kernel/random/boot_id", flags: readOnly | closeOnExec)
            guard descriptor >= 0 else { return 0 }
            defer { _ = close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, 64, 0) }
            guard count > 0 else { return 0 }
            // FNV-1a over the id's text.
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in bytes[0..<count] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            return hash
        #endif
    }

    /// The directory for scratch files: `$TMPDIR`, else `/tmp`.
    static var temporaryDirectory: String {
        if let value = getenv("TMPDIR"), let text = String(validatingCString: value), !text.isEmpty { return text }
        return "/tmp"
    }

    static func errorDescription(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static let readOnly = O_RDONLY
    static let readWrite = O_RDWR
    static let create = O_CREAT
    static let exclusiveCreate = O_EXCL
    static let closeOnExec = O_CLOEXEC
    /// `O_NOATIME` on Linux (the C library declares it only under _GNU_SOURCE; the kernel's
    /// generic value, used by x86-64 and arm64 alike), nothing elsewhere: reads leave the access time
    /// alone. Without it, on a `relatime` mount every read after a write (a write transaction's
    /// read of the header) updates the access time and dirties the inode, which each later
    /// `fdatasync` on ext4 without a journal writes and waits for. Only the file's owner (or a
    /// process with CAP_FOWNER) may ask for it; `open` fails with `EPERM` otherwise.
    #if os(Linux)
        static let noAccessTime: Int32 = 0o1_000_000
    #else
        static let noAccessTime: Int32 = 0
    #endif
    static let notPermitted = EPERM
    static let directory = O_DIRECTORY

    static let noSuchFile = ENOENT
    static let wouldBlock = EWOULDBLOCK
    static let accessDenied = EACCES
    static let tryAgain = EAGAIN
    static let alreadyExists = EEXIST
    static let readOnlyFileSystem = EROFS
    static let noSpace = ENOSPC
    static let ioFailure = EIO
}

/// `open` is variadic in C; this wrapper gives it a fixed signature on every platform.
private enum Foundationless {
    static func openFile(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
        #if canImport(Darwin)
            return Darwin.open(path, flags, mode)
        #elseif canImport(Glibc)
            return Glibc.open(path, flags, mode)
        #else
            return Musl.open(path, flags, mode)
        #endif
    }
}
