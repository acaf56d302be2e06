// Finding an executable of this package that SwiftPM built beside the test binary.
public import Foundation

/// Helper executables that tests run as other processes.
public enum BuiltExecutable {
    /// The first of `names` built next to the test binary (`/proc/self/exe` on Linux) or next to
    /// the test bundle (Darwin).
    /// - Throws: `CocoaError(.fileNoSuchFile)` naming where it looked, when none is there.
    public static func url(named names: String...) throws -> URL {
        var directories: [URL] = []
        if let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: binary).deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        directories.append(Bundle.main.bundleURL)
        for directory in directories {
            for name in names {
                let candidate = directory.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(names.joined(separator: " or ")) near \(directories)"])
    }
}
