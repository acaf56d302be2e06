// Bad command lines (exit 2 with the usage) and `chrono help`.
import Foundation
import Testing

@Suite("usage errors and help")
struct UsageAndHelpTests {
    @Test func helpListsEveryCommandAndTheExitCodes() throws {
        let workspace = try Workspace()
        let help = try workspace.expectSuccess(["help"]).stdout
        for command in [
            "create", "put", "get", "delete", "list", "apply", "history", "undo", "redo", "revert", "snapshot create",
            "snapshot list", "snapshot delete", "snapshot checkout", "backup", "restore", "prune", "verify", "info", "demo",
        ] {
            #expect(help.contains("  \(command) "), "help lists \(command)")
        }
        #expect(help.contains("Exit codes: 0 success, 1 not found"))
        #expect(try workspace.expectSuccess(["--help"]).stdout == help)
    }

    @Test(arguments: [
        "put", "get", "list", "apply", "history", "undo", "revert", "backup", "restore", "prune", "verify", "info", "demo", "create",
    ])
    func helpForACommandShowsUsageOptionsAndExamples(_ command: String) throws {
        let workspace = try Workspace()
        let text = try workspace.expectSuccess(["help", command]).stdout
        #expect(text.hasPrefix("Usage: chrono \(command)"))
        #expect(text.contains("Options:\n"))
        #expect(text.contains("--json"))
        #expect(text.contains("Examples:\n"))
        #expect(text.split(separator: "Examples:").last?.contains("chrono \(command)") == true)
        #expect(try workspace.expectSuccess([command, "--help"]).stdout == text)
    }

    @Test func helpForTheSnapshotGroupShowsAllFourSubcommands() throws {
        let text = try Workspace().expectSuccess(["help", "snapshot"]).stdout
        for subcommand in ["create", "list", "delete", "checkout"] {
            #expect(text.contains("Usage: chrono snapshot \(subcommand) STORE"))
        }
        #expect(try Workspace().expectSuccess(["help", "snapshot", "list"]).stdout.hasPrefix("Usage: chrono snapshot list STORE"))
    }

    @Test func helpForBackupAndRestoreShowsTheirOptionsExitCodesAndExamples() throws {
        let workspace = try Workspace()
        let backup = try workspace.expectSuccess(["help", "backup"]).stdout
        #expect(backup.hasPrefix("Usage: chrono backup STORE DEST [--at ROOT|DATE] [--snapshot NAME] [--with-history]\n"))
        for text in ["--snapshot NAME", "--with-history", "every retained root", "already exists at DEST", "chrono backup notes.chrono"] {
            #expect(backup.contains(text), "help backup mentions \(text)")
        }
        let restore = try workspace.expectSuccess(["help", "restore"]).stdout
        #expect(restore.hasPrefix("Usage: chrono restore STORE BACKUP [--label TEXT] [--replace]\n"))
        for text in ["--replace", "chrono undo STORE", "Exits 3", "another process", "--replace\n"] {
            #expect(restore.contains(text), "help restore mentions \(text)")
        }
    }

    @Test func noCommandOrAnUnknownOneIsAUsageError() throws {
        let workspace = try Workspace()
        try workspace.expectFailure([], exitCode: 2, message: "no command given")
        try workspace.expectFailure(["frobnicate", workspace.store], exitCode: 2, message: "unknown command 'frobnicate'")
        try workspace.expectFailure(["help", "frobnicate"], exitCode: 2, message: "no command named 'frobnicate'")
    }

    @Test(arguments: [
        (["get", "S", "c"], "missing KEY"),
        (["put", "S"], "missing COLLECTION"),
        (["info"], "missing STORE"),
        (["info", "S", "extra"], "unexpected argument 'extra'"),
        (["list", "S", "c", "--sideways"], "unknown option --sideways"),
        (["list", "S", "c", "--limit"], "--limit needs a value"),
        (["list", "S", "c", "--limit", "many"], "--limit must be a whole number"),
        (["list", "S", "c", "--limit", "-1"], "--limit must be a whole number"),
        (["list", "S", "c", "--reverse=yes"], "--reverse takes no value"),
        (["put", "S", "c", "k", "1", "--label", "a", "--label", "b"], "--label is given more than once"),
        (["undo", "S", "--steps", "0"], "--steps"),
        (["revert", "S", "-3"], "ROOT must be a root id"),
    ])
    func badArgumentsAreUsageErrorsThatTouchNothing(_ arguments: [String], _ message: String) throws {
        let workspace = try Workspace.withStore()
        let before = try workspace.storeBytes()
        try workspace.expectFailure(arguments.map { $0 == "S" ? workspace.store : $0 }, exitCode: 2, message: message)
        #expect(try workspace.storeBytes() == before)
    }

    @Test func aUsageErrorPrintsTheCommandsUsage() throws {
        let workspace = try Workspace.withStore()
        let result = try workspace.expectFailure(["get", workspace.store], exitCode: 2, message: "missing COLLECTION")
        #expect(result.stderrLines == [
            "chrono: missing COLLECTION",
            "Usage: chrono get STORE COLLECTION KEY [--at ROOT|DATE]",
            "Run 'chrono help get' for details and examples.",
        ])
    }

    @Test func optionsMayComeAnywhereAndTakeAnEqualsSign() throws {
        let workspace = try Workspace.withStore()
        try workspace.expectSuccess(["put", "--label=Tagged", workspace.store, "c", "k", "1"])
        let history = try workspace.expectSuccess(["--json", "history", workspace.store].dropFirst().map { $0 } + ["--json"]).objects()
        #expect(history.first?["label"] as? String == "Tagged")
    }

    @Test func labelsLongerThanTheEngineAllowsAreRefusedBeforeOpening() throws {
        let workspace = try Workspace.withStore()
        let before = try workspace.storeBytes()
        try workspace.expectFailure(
            ["put", workspace.store, "c", "k", "1", "--label", String(repeating: "l", count: 2000)], exitCode: 2, message: "--label")
        #expect(try workspace.storeBytes() == before)
    }
}
