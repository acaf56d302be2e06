// Lines of standard input, read as bytes: a failed read or text that is not UTF-8 is an error, not the end.
import Foundation

/// Reads stdin line by line. `readLine()` returns nil on a read error (stdin is a directory)
/// and replaces bytes that are not UTF-8; this reader reports both.
struct InputLines {
    private var buffered: [UInt8] = []
    /// Where the unread part of `buffered` starts.
    private var start = 0
    private var reachedEnd = false
    private(set) var lineNumber = 0

    /// The next line without its newline, or nil at the end of input.
    /// - Throws: a failure (exit 4) when reading fails; a usage failure (exit 2) naming the
    ///   line when it is not valid UTF-8.
    mutating func next() throws -> String? {
        while true {
            if let newline = buffered[start...].firstIndex(of: 0x0A) {
                let line = Array(buffered[start..<newline])
                start = newline + 1
                return try decode(line)
            }
            if reachedEnd {
                guard start < buffered.count else { return nil }
                defer { start = buffered.count }
                return try decode(Array(buffered[start...]))
            }
            try fill()
        }
    }

    /// Reads what stdin has now (a pipe gives each line as it is written, so `apply` commits
    /// lines as they arrive).
    private mutating func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { Foundation.read(FileHandle.standardInput.fileDescriptor, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        guard count >= 0 else {
            throw CommandFailure("cannot read the input: \(String(cString: strerror(errno)))", exitCode: .failure)
        }
        guard count > 0 else {
            reachedEnd = true
            return
        }
        buffered.removeSubrange(..<start)
        start = 0
        buffered.append(contentsOf: chunk[..<count])
    }

    private mutating func decode(_ bytes: [UInt8]) throws -> String {
        lineNumber += 1
        var line = bytes
        if line.last == 0x0D { line.removeLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw CommandFailure("line \(lineNumber): the input is not valid UTF-8", exitCode: .usage)
        }
        return text
    }
}
