// Drives the engine's test helper executable as a second process that holds a store's writer.
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
        process.executableURL = try Self.executable()
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

    /// The helper built beside this test binary (Linux) or beside the test bundle (Darwin).
    private static func executable() throws -> URL {
        var directories: [URL] = []
        if let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: binary).deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        directories.append(Bundle.main.bundleURL)
        for directory in directories {
            let candidate = directory.appendingPathComponent("ChronoTestHelper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "ChronoTestHelper near \(directories)"])
    }
}
