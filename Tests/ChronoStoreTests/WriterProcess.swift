// Drives the engine's test helper executable as a second process that holds a store's writer.
import ChronoStoreTestSupport
import Foundation

/// A `chrono-test-helper hold-write STORE` process: it takes the writer, says "ready", and
/// commits when its standard input closes.
final class WriterProcess: Sendable {
    private let process: Process
    private let input: Pipe
    private let output: Pipe
    private let errors: Pipe

    /// Starts the helper on the store at `path` and returns once it holds the writer.
    init(holdingWriterOf path: String) throws {
        process = Process()
        input = Pipe()
        output = Pipe()
        errors = Pipe()
        process.executableURL = try BuiltExecutable.url(named: "ChronoTestHelper")
        process.arguments = ["hold-write", path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var text = ""
        while !text.contains("ready\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: "helper ended: \(finish())"]) }
            text += String(decoding: data, as: UTF8.self)
        }
    }

    /// Lets the helper commit and waits for it; returns its exit status and standard error.
    @discardableResult
    func finish() -> (status: Int32, errors: String) {
        try? input.fileHandleForWriting.close()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }

}
