// Temporary directories for tests: each test gets its own, removed afterwards.
import Foundation

/// A fresh directory under the system's temporary directory.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "chrono") throws {
        let base = FileManager.default.temporaryDirectory.path
        let name = "\(prefix)-\(UUID().uuidString)"
        path = (base as NSString).appendingPathComponent(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside this directory.
    public func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
}

/// Reads environment variables for tests (soak switches, seeds).
public enum Environment {
    public static func value(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

    /// Whether the long soak tests should run (`CHRONO_SOAK=1`).
    public static var soakEnabled: Bool { value("CHRONO_SOAK") == "1" }
}
