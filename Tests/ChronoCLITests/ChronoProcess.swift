// Running the built `chrono` executable as a user would, and reading what it printed.
import ChronoStoreTestSupport
import Foundation
import Testing

/// What one run of `chrono` produced.
struct ChronoResult {
    var exitCode: Int32
    var stdout: String
    var stderr: String

    /// stdout as JSON (fragments allowed), or a recorded test failure.
    func json(sourceLocation: SourceLocation = #_sourceLocation) throws -> Any {
        let data = Data(stdout.utf8)
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            Issue.record("stdout is not JSON: \(stdout)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// stdout as a JSON object.
    func object(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try #require(try json(sourceLocation: sourceLocation) as? [String: Any], sourceLocation: sourceLocation)
    }

    /// stdout as a JSON array of objects.
    func objects(sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try #require(try json(sourceLocation: sourceLocation) as? [[String: Any]], sourceLocation: sourceLocation)
    }

    /// The lines of stderr.
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// A temporary directory with a store path in it, and a way to run `chrono` there.
struct Workspace {
    let directory: TemporaryDirectory
    /// `store.chrono` inside the directory (not created until a test runs `create`).
    let store: String

    init() throws {
        directory = try TemporaryDirectory(prefix: "chrono-cli")
        store = directory.file("store.chrono")
    }

    /// A workspace whose store has been created.
    static func withStore(_ extra: String...) throws -> Workspace {
        let workspace = try Workspace()
        try workspace.expectSuccess(["create", workspace.store] + extra)
        return workspace
    }

    /// Runs `chrono` with `arguments`, feeding `stdin` (none when nil), with TMPDIR set to the
    /// workspace so anything the tool puts in a temporary directory is cleaned up.
    func run(_ arguments: [String], stdin: String? = nil) throws -> ChronoResult {
        let id = UUID().uuidString
        let outPath = directory.file("stdout-\(id)"), errPath = directory.file("stderr-\(id)")
        try Data().write(to: URL(fileURLWithPath: outPath))
        try Data().write(to: URL(fileURLWithPath: errPath))
        let process = Process()
        process.executableURL = try ChronoExecutable.url()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        if let stdin {
            let inPath = directory.file("stdin-\(id)")
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: inPath))
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        process.waitUntilExit()
        defer { for path in [outPath, errPath, directory.file("stdin-\(id)")] { try? FileManager.default.removeItem(atPath: path) } }
        return ChronoResult(
            exitCode: process.terminationStatus,
            stdout: try String(contentsOfFile: outPath, encoding: .utf8),
            stderr: try String(contentsOfFile: errPath, encoding: .utf8))
    }

    /// Runs `chrono` and expects exit 0 with nothing on stderr.
    @discardableResult
    func expectSuccess(_ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> ChronoResult {
        let result = try run(arguments, stdin: stdin)
        #expect(result.exitCode == 0, "chrono \(arguments.joined(separator: " ")) failed: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, "unexpected stderr: \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs `chrono` and expects it to fail with `exitCode`, nothing on stdout, and a first
    /// stderr line `chrono: ...` that contains `message`; only usage errors print more lines.
    @discardableResult
    func expectFailure(
        _ arguments: [String], exitCode: Int32, message: String, stdin: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ChronoResult {
        let result = try run(arguments, stdin: stdin)
        #expect(result.exitCode == exitCode, "exit \(result.exitCode), stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "unexpected stdout: \(result.stdout)", sourceLocation: sourceLocation)
        let first = result.stderrLines.first ?? ""
        #expect(first.hasPrefix("chrono: "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(first.contains(message), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        if exitCode == 2 {
            #expect(result.stderr.contains("Usage: chrono"), "a usage error prints the usage", sourceLocation: sourceLocation)
        } else {
            #expect(result.stderrLines.count == 1, "one line on stderr: \(result.stderr)", sourceLocation: sourceLocation)
        }
        return result
    }

    /// Starts `chrono` with `arguments` and leaves it running, with pipes to its stdin, stdout
    /// and stderr, for tests that need a second process or interrupt one.
    func start(_ arguments: [String]) throws -> RunningChrono {
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path
        return try RunningChrono(executable: try ChronoExecutable.url(), arguments: arguments, environment: environment)
    }

    /// The names of the files in the workspace directory, sorted.
    func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Commits `value` under `key` and returns the new root id.
    @discardableResult
    func put(_ collection: String, _ key: String, _ value: String, label: String? = nil) throws -> Int {
        let labelArguments = label.map { ["--label", $0] } ?? []
        let result = try expectSuccess(["put", store, collection, key, value, "--json"] + labelArguments)
        return try #require(try result.object()["root"] as? Int)
    }

    /// The store file's bytes, to check that a failed command wrote nothing.
    func storeBytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: store)) }
}

/// A `chrono` process that runs while the test goes on.
final class RunningChrono {
    private let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private var pendingOutput = Data()

    init(executable: URL, arguments: [String], environment: [String: String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Writes `line` and a newline to the process's stdin.
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the next line on the process's stdout; nil once stdout ends.
    func readLine() -> String? {
        while true {
            if let newline = pendingOutput.firstIndex(of: 0x0A) {
                let line = String(decoding: pendingOutput[..<newline], as: UTF8.self)
                pendingOutput.removeSubrange(...newline)
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            pendingOutput.append(data)
        }
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    func interrupt() { process.interrupt() }

    /// Closes stdin, waits for the process to end, and returns what it printed. A process ended
    /// by a signal reports 128 plus the signal's number, as a shell does.
    func finish() throws -> ChronoResult {
        try input.fileHandleForWriting.close()
        let stdout = pendingOutput + output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let signalled = process.terminationReason == .uncaughtSignal
        return ChronoResult(
            exitCode: signalled ? 128 + process.terminationStatus : process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// Finds the `chrono` binary SwiftPM built next to the test bundle.
enum ChronoExecutable {
    static func url() throws -> URL {
        #if os(Linux)
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let directory = runner.deletingLastPathComponent()
        #else
        let bundle = try #require(Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") })
        let directory = bundle.bundleURL.deletingLastPathComponent()
        #endif
        let url = directory.appendingPathComponent("chrono")
        try #require(FileManager.default.isExecutableFile(atPath: url.path), "no chrono binary at \(url.path)")
        return url
    }
}
