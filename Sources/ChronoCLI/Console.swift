// Standard output and standard error: buffered results, one-line errors, terminal detection.
import Foundation

/// Where a command writes. Results go to stdout; messages, errors and progress to stderr, so
/// a pipe receives only results.
///
/// Not thread-safe: one command uses it from the main thread.
final class Console {
    /// Whether results are printed as JSON (`--json`).
    var prefersJSON = false
    private var pending: [UInt8] = []
    private static let flushThreshold = 64 << 10

    /// Whether stderr is a terminal: only then is a progress bar drawn.
    let showsProgress: Bool = isatty(FileHandle.standardError.fileDescriptor) == 1

    /// Why writing stdout failed, once it has; nothing more is written after that.
    private var outputFailure: String?

    /// Appends `line` and a newline to stdout (buffered; see ``flush()``).
    func print(_ line: String) {
        pending.append(contentsOf: line.utf8)
        pending.append(0x0A)
        if pending.count >= Self.flushThreshold { writePending() }
    }

    /// Prints `value` as one line of compact JSON.
    func print(_ value: JSONValue) { print(value.serialized()) }

    /// Writes everything printed so far to stdout now.
    /// - Throws: a failure (exit 4) when stdout could not take it, now or earlier (a full disk,
    ///   a closed file), so a command never reports success for output that was lost.
    func flush() throws {
        writePending()
        if let outputFailure { throw CommandFailure("cannot write the output: \(outputFailure)", exitCode: .failure) }
    }

    private func writePending() {
        guard !pending.isEmpty else { return }
        defer { pending.removeAll(keepingCapacity: true) }
        guard outputFailure == nil else { return }
        do {
            try FileHandle.standardOutput.write(contentsOf: pending)
        } catch let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(EPIPE) {
            // The reader went away (`chrono list ... | head`): drop the output quietly, as tools do.
            return
        } catch {
            outputFailure = (error as NSError).localizedDescription
        }
    }

    /// Writes `text` to stderr immediately, without a newline (for progress bars).
    func writeError(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    /// Writes one line to stderr immediately.
    func printError(_ line: String) { writeError(line + "\n") }
}
