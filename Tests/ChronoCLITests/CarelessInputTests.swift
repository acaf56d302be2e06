// Careless input and output: bytes that are not UTF-8, oversized options, unwritable output, unreadable input.
import Foundation
import Testing

extension Workspace {
    /// Runs `script` with `/bin/sh`, where `$0` is the chrono executable and `$1` the store, for
    /// what `Process` cannot express: arguments that are not UTF-8, and redirections.
    func shell(_ script: String) throws -> ChronoResult {
        let id = UUID().uuidString
        let outPath = directory.file("sh-stdout-\(id)"), errPath = directory.file("sh-stderr-\(id)")
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { for path in [outPath, errPath] { try? FileManager.default.removeItem(atPath: path) } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, try ChronoExecutable.url().path, store]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
        process.waitUntilExit()
        return ChronoResult(
            exitCode: process.terminationStatus,
            stdout: try String(contentsOfFile: outPath, encoding: .utf8),
            stderr: try String(contentsOfFile: errPath, encoding: .utf8))
    }
}

@Suite("Careless input")
struct CarelessInputTests {
    @Test func keysThatAreNotUTF8AreRejectedInsteadOfCollidingOnTheReplacementCharacter() throws {
        let workspace = try Workspace.withStore()
        let first = try workspace.shell(#""$0" put "$1" c "$(printf '\377')" 1"#)
        #expect(first.exitCode == 2, "\(first.stderr)")
        #expect(first.stderr.contains("not valid UTF-8"), "\(first.stderr)")
        let name = try workspace.shell(#""$0" put "$1" "$(printf 'c\376')" k 1"#)
        #expect(name.exitCode == 2, "\(name.stderr)")
        // Nothing was written, so the U+FFFD key both would have become does not exist.
        try workspace.expectFailure(["get", workspace.store, "c", "\u{FFFD}"], exitCode: 1, message: "no key")
    }

    @Test func loneSurrogatesInJSONAreRejected() throws {
        let workspace = try Workspace.withStore()
        try workspace.expectFailure(["put", workspace.store, "c", "k", #""\ud800""#], exitCode: 2, message: "lone surrogate")
        let apply = try workspace.run(["apply", workspace.store], stdin: #"{"put":{"c":"c","k":"\udc00","v":1}}"# + "\n")
        #expect(apply.exitCode == 2)
        #expect(apply.stderr.contains("line 1") && apply.stderr.contains("lone surrogate"), "\(apply.stderr)")
        try workspace.expectSuccess(["put", workspace.store, "c", "k", #""\ud83d\ude00""#])
    }

    @Test func applyRejectsInputLinesThatAreNotUTF8() throws {
        let workspace = try Workspace.withStore()
        let result = try workspace.shell(#"printf '{"put":{"c":"c","k":"\377","v":1}}\n' | "$0" apply "$1""#)
        #expect(result.exitCode == 2, "\(result.stderr)")
        #expect(result.stderr.contains("line 1") && result.stderr.contains("UTF-8"), "\(result.stderr)")
    }

    @Test func retentionTooLongForTheArithmeticIsAUsageError() throws {
        let workspace = try Workspace()
        try workspace.expectFailure(
            ["create", workspace.store, "--retention", "days:106751991168"], exitCode: 2, message: "--retention must be")
        try workspace.expectSuccess(["create", workspace.store, "--retention", "days:1000000"])
        try workspace.put("c", "k", "1")
        try workspace.expectFailure(["prune", workspace.store, "--older-than", "1000001"], exitCode: 2, message: "older-than")
    }

    @Test func outputThatCannotBeWrittenFailsWithExitFour() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        for command in [#""$0" get "$1" c k > /dev/full"#, #""$0" list "$1" c --json > /dev/full"#] {
            let result = try workspace.shell(command)
            #expect(result.exitCode == 4, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("cannot write the output"), "\(result.stderr)")
        }
    }

    @Test func outputIntoAClosedPipeEndsQuietly() throws {
        let workspace = try Workspace.withStore()
        let values = (0..<20000).map { #"{"put":{"c":"c","k":"key-\#($0)","v":\#($0)}}"# }
        try workspace.expectSuccess(["apply", workspace.store], stdin: "[" + values.joined(separator: ",") + "]\n")
        let result = try workspace.shell(#""$0" list "$1" c | head -n 1"#)
        #expect(result.exitCode == 0)
        #expect(result.stdout.hasPrefix("key-0\t0"))
        #expect(!result.stderr.contains("cannot write"), "\(result.stderr)")
    }

    @Test func inputThatCannotBeReadFailsWithExitFour() throws {
        let workspace = try Workspace.withStore()
        let result = try workspace.shell(#""$0" apply "$1" < "$(dirname "$1")""#)
        #expect(result.exitCode == 4, "\(result.stderr)")
        #expect(result.stderr.contains("cannot read the input"), "\(result.stderr)")
    }

    @Test func plainListEscapesKeysWithTabsAndNewlines() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "a\tb", "1")
        try workspace.put("c", "c\nd", "2")
        try workspace.put("c", "e\\f", "3")
        let output = try workspace.expectSuccess(["list", workspace.store, "c"]).stdout
        let expected: String = #"a\tb"# + "\t1\n" + #"c\nd"# + "\t2\n" + #"e\\f"# + "\t3\n"
        #expect(output == expected)
        let json = try workspace.expectSuccess(["list", workspace.store, "c", "--json"]).objects()
        #expect(json.compactMap { $0["key"] as? String } == ["a\tb", "c\nd", "e\\f"])
    }

    @Test func verifyOfATruncatedStoreReportsDamage() throws {
        let workspace = try Workspace.withStore()
        let filler = String(repeating: "v", count: 200)
        let puts = (0..<200).map { #"{"put":{"c":"c","k":"key-\#($0)","v":"\#(filler)"}}"# }
        try workspace.expectSuccess(["apply", workspace.store], stdin: "[" + puts.joined(separator: ",") + "]\n")
        let bytes = try workspace.storeBytes()
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: workspace.store))
        try workspace.expectFailure(["verify", workspace.store], exitCode: 3, message: "truncated")
    }
}
