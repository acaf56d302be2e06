// How large the engine's page writes are: neighbouring pages are coalesced, but no `pwrite` carries
// more than `PageFile.largestWrite` bytes (a large write leaves its pages in large page-cache
// folios, which make every later small write into them slower; Docs/Performance.md, "Page cache
// folios").
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// A real file that records the size of every write made through it.
///
/// `@unchecked Sendable`: `sizes` is guarded by `lock`; `inner` is thread-safe.
private final class WriteRecordingFile: StoreFile, @unchecked Sendable {
    let inner: PosixFile
    private let lock = Lock()
    private var sizes: [Int] = []

    init(_ inner: PosixFile) { self.inner = inner }

    var name: String { inner.name }
    var writeSizes: [Int] { lock.withLock { sizes } }
    func forget() { lock.withLock { sizes.removeAll() } }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try inner.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        lock.withLock { sizes.append(bytes.count) }
        try inner.write(bytes, at: offset)
    }

    func synchronize() throws { try inner.synchronize() }
    func byteCount() throws -> UInt64 { try inner.byteCount() }
    func truncate(to byteCount: UInt64) throws { try inner.truncate(to: byteCount) }
}

@Suite("Page write sizes")
struct PageWriteSizeTests {
    /// Found by profiling: a 1M-record bulk load wrote its pages in runs of up to 256 pages (1 MiB
    /// a `pwrite`), and every later single put into those pages paid for the large folios.
    @Test(arguments: [4096, 16384])
    func aLargeCommitWritesItsRunsInPiecesOfAtMostTheLargestWrite(pageSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("runs.chrono")
        let file = WriteRecordingFile(try PosixFile(path: path, create: true))
        var options = StoreOptions(durability: .durable)
        options.pageSize = pageSize
        let store = try Store.create(in: file, options: options)
        file.forget()
        let value = [UInt8](repeating: 7, count: 150)
        try store.write { transaction in
            for index in 0..<20_000 { try transaction.put(bytes("key-\(100_000 + index)"), value, in: "items") }
        }
        let sizes = file.writeSizes
        let pageWrites = sizes.filter { $0 % pageSize == 0 }
        #expect(pageWrites.reduce(0, +) / pageSize > 3 * PageFile.largestWrite / pageSize, "the commit wrote several runs' worth of pages")
        #expect(sizes.allSatisfy { $0 <= max(PageFile.largestWrite, pageSize) }, "a write larger than the cap: \(sizes.max() ?? 0)")
        if pageSize < PageFile.largestWrite {
            #expect(pageWrites.contains { $0 == PageFile.largestWrite }, "neighbouring pages are still coalesced")
        }
        try store.close()
        let reopened = try Store.open(at: path, options: options)
        defer { try? reopened.close() }
        #expect(try reopened.read { try $0.count(in: "items") } == 20_000)
        #expect(try reopened.verify().isSound)
    }
}
