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
        let path = directory + "/fsync-probe"
        let descriptor = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw BenchmarkError.system("open \(path)", errno) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let page = [UInt8](repeating: 0xA5, count: 4096)
        var samples: [Double] = []
        for index in 0..<count {
            let seconds = try Stopwatch.time {
                let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 4096, off_t(index * 4096)) }
                guard written == 4096 else { throw BenchmarkError.system("pwrite \(path)", errno) }
                guard fdatasync(descriptor) == 0 else { throw BenchmarkError.system("fdatasync \(path)", errno) }
            }.seconds
            samples.append(seconds * 1000)
        }
        return FsyncLatency(
            sampleCount: count, medianMilliseconds: Stopwatch.median(samples),
            p90Milliseconds: Stopwatch.percentile(samples, 0.9), p99Milliseconds: Stopwatch.percentile(samples, 0.99))
    }
}
