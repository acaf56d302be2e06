// Runs the recipes' helper executable as a second process (an app extension).
import ChronoStoreTestSupport
import Foundation

enum RecipeHelperProcess {
    /// Runs `ChronoRecipeHelper` with `arguments` to its end on a thread of its own (waiting for a
    /// process must not hold one of the cooperative pool's few threads, which the other tests
    /// running in parallel need); returns its exit status and standard error.
    static func run(_ arguments: [String]) async throws -> (status: Int32, errors: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(arguments) })
            }
        }
    }

    private static func runBlocking(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = try BuiltExecutable.url(named: "ChronoRecipeHelper")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }

}
