// What a store's commits do to its data file's times: reads must not update the access time,
// and the per-commit check of the path must not ask for the change time (each would make the
// next `fdatasync` on ext4 without a journal write the inode too; Docs/Performance.md,
// "The inode a commit dirtied").
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

#if os(Linux)
    import Glibc

    @Suite("Data file times")
    struct FileTimesTests {
        private func accessAndModification(_ path: String) throws -> (access: timespec, modification: timespec) {
            var status = stat()
            try #require(stat(path, &status) == 0)
            return (status.st_atim, status.st_mtim)
        }

        private func nanoseconds(_ time: timespec) -> Int { time.tv_sec * 1_000_000_000 + time.tv_nsec }

        /// Found by profiling a durable single put (perf: `ext4_write_inode` under `fdatasync`):
        /// each write transaction reads the header with `pread`, and on a `relatime` mount a read
        /// after a write updated the access time, dirtying the inode. The data file is now opened
        /// with `O_NOATIME`, so commits and reads leave the access time as it was.
        @Test func commitsAndReadsLeaveTheDataFilesAccessTimeAlone() throws {
            let directory = try TemporaryDirectory()
            let path = directory.file("times.chrono")
            let store = try Store.create(at: path, options: StoreOptions(durability: .durable))
            defer { try? store.close() }
            try store.write { try $0.put(bytes("first"), bytes("1"), in: "items") }
            Thread.sleep(forTimeInterval: 0.02)
            try store.write { try $0.put(bytes("second"), bytes("2"), in: "items") }
            let before = try accessAndModification(path)
            // The file changed after it was last read: a `relatime` mount would update the access
            // time at the next read (a `noatime` mount never does, and this test then proves less).
            #expect(nanoseconds(before.modification) >= nanoseconds(before.access))
            Thread.sleep(forTimeInterval: 0.02)
            for round in 0..<5 {
                try store.write { try $0.put(bytes("key \(round)"), bytes("value \(round)"), in: "items") }
                _ = try store.read { try $0.value(forKey: bytes("first"), in: "items") }
            }
            let reopened = try Store.open(at: path, options: StoreOptions(durability: .durable))
            _ = try reopened.read { try $0.value(forKey: bytes("second"), in: "items") }
            try reopened.close()
            let after = try accessAndModification(path)
            #expect(nanoseconds(after.modification) > nanoseconds(before.modification), "the commits wrote the file")
            #expect(nanoseconds(after.access) == nanoseconds(before.access), "a read updated the access time")
        }

        /// The path check of every write transaction asks `statx` for the inode alone; its device
        /// and inode must still be those of the open file (else every commit would see the store
        /// as replaced).
        @Test func thePathIdentityMatchesTheOpenFilesIdentity() throws {
            let directory = try TemporaryDirectory()
            let path = directory.file("identity.chrono")
            let file = try PosixFile(path: path, create: true)
            #expect(Platform.identity(atPath: path) == (try file.identity()))
            #expect(Platform.identity(atPath: directory.file("missing.chrono")) == nil)
            let other = directory.file("other.chrono")
            let second = try PosixFile(path: other, create: true)
            #expect(Platform.identity(atPath: other) == (try second.identity()))
            #expect(Platform.identity(atPath: path) != Platform.identity(atPath: other))
            #expect(Platform.fileSize(file.descriptor) == 0)
            try [UInt8](repeating: 1, count: 100).withUnsafeBytes { try file.write($0, at: 4_000) }
            #expect(try file.byteCount() == 4_100)
        }
    }
#endif
