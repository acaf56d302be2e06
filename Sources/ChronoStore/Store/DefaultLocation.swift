// Where an app keeps its store when it does not choose: Application Support or the XDG data home.
public import Foundation

extension ChronoStore {
    /// The conventional place for an app's store file named `name` (`"\(name).chrono"`).
    ///
    /// - On Apple platforms: `Application Support/<bundle identifier>/` in the user domain.
    /// - On Linux: `$XDG_DATA_HOME/<app>/`, or `~/.local/share/<app>/` when it is unset.
    ///
    /// `<app>` is the bundle identifier when there is one, else the process name, so this never
    /// fails for a command-line tool without a bundle. The directory may not exist yet:
    /// ``open(at:options:createIfMissing:)`` creates it. Cost: a few environment lookups.
    public static func defaultURL(named name: String = "Store") -> URL {
        directory(for: applicationName()).appendingPathComponent(name + ".chrono", isDirectory: false)
    }

    static func applicationName() -> String {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        let process = ProcessInfo.processInfo.processName
        return process.isEmpty ? "ChronoStore" : process
    }

    static func directory(for application: String) -> URL {
        #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
        #else
            let environment = ProcessInfo.processInfo.environment
            let base: URL
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
                base = URL(fileURLWithPath: data, isDirectory: true)
            } else {
                base = URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true).appendingPathComponent(".local/share")
            }
        #endif
        return base.appendingPathComponent(application, isDirectory: true)
    }
}
