// The disk's durable-write latency: a loop of 4 KiB pwrite + fdatasync on a scratch file.

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one durable 4 KiB write costs on the scratch directory's disk. Every durable commit of
/// either engine pays at least this, so it bounds the single-put and undo workloads.
struct FsyncLatency: Codable, Sendable {
    var sampleCount: Int
    var medianMilliseconds: Double
    var p90Milliseconds: Double
    var p99Milliseconds: Double

    /// Writes `count` pages to one file, each at its own offset, syncing after each.
    static func measure(in directory: String, count: Int) throws -> FsyncLatency {
        let page = [UInt8](repeating: 0xA5, count: 4096)
        let samples = try ProbeFile.using(directory + "/fsync-probe") { file in
            try (0..<count).map { index in
                try Stopwatch.time {
                    try page.withUnsafeBytes { try file.write($0, at: index * 4096) }
                    try file.sync()
                }.seconds * 1000
            }
        }
        return FsyncLatency(
            sampleCount: count, medianMilliseconds: Stopwatch.median(samples),
            p90Milliseconds: Stopwatch.percentile(samples, 0.9), p99Milliseconds: Stopwatch.percentile(samples, 0.99))
    }
}

/// What the disk charges for where a commit's pages lie: durable writes of 6 pages plus a
/// 512-byte header write at offset 0 (as a commit's pages and header slot), over blocks already
/// allocated, the 6 pages in one run against a run of 4 and two pages far from it. The fsync probe
/// above appends (each write extends its file), which the file system also charges for; this one
/// overwrites, as commits that reuse free pages do.
struct WriteLayoutCost: Codable, Sendable {
    var sampleCount: Int
    /// Median milliseconds: the 6 pages in one run, then in three places.
    var oneRunMilliseconds: Double
    var threePlacesMilliseconds: Double
    /// Median milliseconds of the header write alone (overwrite plus fdatasync).
    var headerOnlyMilliseconds: Double

    /// Samples of the three layouts interleaved, at random places in a 16 MiB file written first.
    static func measure(in directory: String, count: Int) throws -> WriteLayoutCost {
        try ProbeFile.using(directory + "/layout-probe") { file in try measure(on: file, count: count) }
    }

    private static func measure(on file: ProbeFile, count: Int) throws -> WriteLayoutCost {
        let pageCount = 4096
        let chunk = [UInt8](repeating: 0, count: 256 * 4096)
        for start in stride(from: 0, to: pageCount, by: 256) {
            try chunk.withUnsafeBytes { try file.write($0, at: start * 4096) }
        }
        try file.sync()
        let pages = [UInt8](repeating: 0x5A, count: 6 * 4096)
        var generator = SeededGenerator(seed: 7)
        func place() -> Int { 16 + Int(generator.next() % UInt64(pageCount - 32)) }
        var oneRun: [Double] = []
        var threePlaces: [Double] = []
        var headerOnly: [Double] = []
        /// A place at least 64 pages from `start` (so it is not part of the run).
        func far(from start: Int) -> Int {
            var page = place()
            while abs(page - start) < 64 { page = place() }
            return page
        }
        for sample in 0..<count {
            let start = place()
            let (far1, far2) = (far(from: start), far(from: start))
            // The order rotates, so no layout always follows another's sync.
            for layout in 0..<3 {
                switch (sample + layout) % 3 {
                case 0: oneRun.append(try commit([(start, 6)], file, pages))
                case 1: threePlaces.append(try commit([(start + 8, 4), (far1, 1), (far2, 1)], file, pages))
                default: headerOnly.append(try commit([], file, pages))
                }
            }
        }
        return WriteLayoutCost(
            sampleCount: count, oneRunMilliseconds: Stopwatch.median(oneRun),
            threePlacesMilliseconds: Stopwatch.median(threePlaces), headerOnlyMilliseconds: Stopwatch.median(headerOnly))
    }

    /// Writes `runs` (first page, page count) and the header, syncs; returns milliseconds.
    private static func commit(_ runs: [(Int, Int)], _ file: ProbeFile, _ pages: [UInt8]) throws -> Double {
        try Stopwatch.time {
            try pages.withUnsafeBytes { bytes in
                for (first, count) in runs {
                    try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<count * 4096]), at: first * 4096)
                }
                try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<512]), at: 0)
            }
            try file.sync()
        }.seconds * 1000
    }
}

/// A scratch file the disk probes write and sync, removed when the probe ends.
private struct ProbeFile {
    let path: String
    let descriptor: Int32

    /// Creates (or truncates) the file at `path`, runs `body` on it, then closes and removes it.
    static func using<Result>(_ path: String, _ body: (ProbeFile) throws -> Result) throws -> Result {
        let descriptor = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw BenchmarkError.system("open \(path)", errno) }
        defer {
            close(descriptor)
            unlink(path)
        }
        return try body(ProbeFile(path: path, descriptor: descriptor))
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        let written = pwrite(descriptor, bytes.baseAddress, bytes.count, off_t(offset))
        guard written == bytes.count else { throw BenchmarkError.system("pwrite \(path)", errno) }
    }

    func sync() throws {
        guard fdatasync(descriptor) == 0 else { throw BenchmarkError.system("fdatasync \(path)", errno) }
    }
}

extension WriteLayoutCost {
    /// "one run 0.30 ms, three places 0.44 ms (1.47x), header alone 0.21 ms", medians.
    var summary: String {
        let ratio = oneRunMilliseconds > 0 ? threePlacesMilliseconds / oneRunMilliseconds : 0
        return "one run \(Formatting.seconds(oneRunMilliseconds / 1000)), three places "
            + "\(Formatting.seconds(threePlacesMilliseconds / 1000)) (\(String(format: "%.2f", ratio))x), header alone "
            + "\(Formatting.seconds(headerOnlyMilliseconds / 1000)), medians"
    }
}
