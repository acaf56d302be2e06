// A private directory for one run's store files, removed when the run ends.

import Foundation

/// `BASE/run-PID`, created empty. Keep BASE on the disk you want to measure: a tmpfs makes
/// every sync free. The default base, `scratch/` under the current directory, is git-ignored
/// when the benchmark runs from Benchmarks/.
final class ScratchDirectory {
    let path: String

    init(base: String) throws {
        let absoluteBase = base.hasPrefix("/") ? base : FileManager.default.currentDirectoryPath + "/" + base
        path = absoluteBase + "/run-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The path of a file named `name` inside this directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// Deletes `name` and the files ChronoStore and SQLite keep beside it.
    func removeStore(_ name: String) {
        for suffix in ["", ".lock", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: file(name) + suffix)
        }
    }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The size of the file at `path` in bytes (0 when it does not exist).
    static func byteCount(of path: String) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
