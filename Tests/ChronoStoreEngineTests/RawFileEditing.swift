// Raw edits and inspections of store files on disk, for the damage and bad-input tests.
@testable import ChronoStoreEngine
import Foundation

/// Reads and edits files byte by byte, bypassing the engine, as damage or a careless user would.
enum RawFile {
    /// Every byte of the file at `path`.
    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Replaces the file at `path` with `contents` (creating it if needed).
    static func write(_ path: String, _ contents: [UInt8]) throws {
        try Data(contents).write(to: URL(fileURLWithPath: path))
    }

    /// Flips every bit of the byte at `offset`, in place, as a damaged sector would.
    static func flipByte(in path: String, at offset: UInt64) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        guard let original = try handle.read(upToCount: 1)?.first else { throw CocoaError(.fileReadCorruptFile) }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [original ^ 0xFF])
    }

    /// Writes `contents` at `offset` in the file at `path`, in place.
    static func overwrite(in path: String, at offset: UInt64, with contents: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: contents)
    }

    /// The kind byte of every page of the file (index = page number), read from each page
    /// header. Page 0 is the file header and has no kind; its entry is 0.
    static func pageKinds(_ path: String, pageSize: Int) throws -> [UInt8] {
        let contents = try bytes(path)
        return (0..<(contents.count / pageSize)).map { page in
            page == 0 ? 0 : contents[page * pageSize + PageHeader.kindOffset]
        }
    }

    /// Whether anything exists at `path`.
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// The lock file that opening a store at `path` creates beside it.
    static func lockPath(of path: String) -> String { path + ".lock" }
}
