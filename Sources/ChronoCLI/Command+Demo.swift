// The demo command: a guided tour of a fresh store, the README's first command.
import Foundation

extension Command {
    static let demo = Command(
        name: "demo", positionals: [.optional("DIR")],
        summary: "a guided tour: commits, history, undo/redo, a snapshot, a branch, a backup",
        details: """
            Creates a store named demo.chrono in DIR (a new temporary directory when DIR is left
            out), then commits a few labelled transactions, shows the history, undoes and redoes,
            takes a snapshot, makes a branch, backs up the head into demo-backup.chrono and
            verifies the backup, and verifies the store, saying what each step did and which chrono
            command does the same. Both files are left in place to explore. Refuses (exit 4),
            writing nothing, when either file already exists in DIR.
            With --json prints {"store":PATH,"backup":PATH,"head":ID} instead of the tour.
            """,
        examples: ["chrono demo", "chrono demo /tmp/chrono-tour"],
        run: runDemo)

    private static func runDemo(_ invocation: Invocation) throws {
        let directory = try invocation.optionalPositional("DIR") ?? temporaryDirectory()
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure("cannot create the directory \(directory): \(error.localizedDescription)", exitCode: .failure)
        }
        let path = (directory as NSString).appendingPathComponent("demo.chrono")
        let backupPath = (directory as NSString).appendingPathComponent("demo-backup.chrono")
        if FileManager.default.fileExists(atPath: backupPath) {
            throw CommandFailure("a file already exists at \(backupPath)", exitCode: .failure)
        }
        let tour = try DemoTour(path: path, backupPath: backupPath, console: invocation.console, narrates: !invocation.prefersJSON)
        let head = try tour.run()
        if invocation.prefersJSON {
            invocation.console.print(.object([("store", .string(path)), ("backup", .string(backupPath)), ("head", .id(head))]))
        }
    }

    private static func temporaryDirectory() throws -> String {
        let name = "chrono-demo-\(UUID().uuidString.prefix(8).lowercased())"
        return (FileManager.default.temporaryDirectory.path as NSString).appendingPathComponent(name)
    }
}
