// `chrono apply`: JSON lines on stdin, one durable transaction per line, stopping at a bad line.
import Foundation
import Testing

@Suite("apply")
struct ApplyCommandTests {
    @Test func eachLineIsOneTransactionAndItsRootIsPrinted() throws {
        let workspace = try Workspace.withStore()
        let input = """
            {"put":{"c":"notes","k":"a","v":{"title":"A"}}}

            [{"put":{"c":"notes","k":"b","v":2}},{"put":{"c":"tags","k":"x","v":[1.50]}}]
            {"delete":{"c":"notes","k":"a"}}
            """
        let result = try workspace.expectSuccess(["apply", workspace.store, "--label", "Import"], stdin: input)
        #expect(result.stdout == "2\n3\n4\n")
        #expect(try workspace.expectSuccess(["get", workspace.store, "tags", "x"]).stdout == "[1.50]\n")
        #expect(try workspace.expectSuccess(["get", workspace.store, "notes", "a", "--at", "2"]).stdout == #"{"title":"A"}"# + "\n")
        try workspace.expectFailure(["get", workspace.store, "notes", "a"], exitCode: 1, message: "no key")
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.prefix(3).map { $0["label"] as? String } == ["Import", "Import", "Import"])
    }

    @Test func withJSONEachCommitPrintsARootObjectPerLine() throws {
        let workspace = try Workspace.withStore()
        let input = #"{"put":{"c":"c","k":"1","v":1}}"# + "\n" + #"{"put":{"c":"c","k":"2","v":2}}"# + "\n"
        let result = try workspace.expectSuccess(["apply", workspace.store, "--json"], stdin: input)
        #expect(result.stdout == "{\"root\":2}\n{\"root\":3}\n")
    }

    @Test func aBadLineInTheMiddleStopsWithExitTwoAndKeepsEarlierLines() throws {
        let workspace = try Workspace.withStore()
        let input = [
            #"{"put":{"c":"c","k":"1","v":1}}"#,
            #"{"put":{"c":"c","k":"2","v":2}}"#,
            #"{"put":{"c":"c","k":"3","v":}}"#,
            #"{"put":{"c":"c","k":"4","v":4}}"#,
        ].joined(separator: "\n")
        let result = try workspace.run(["apply", workspace.store], stdin: input)
        #expect(result.exitCode == 2)
        #expect(result.stdout == "2\n3\n")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.hasPrefix("chrono: line 3: invalid JSON"))
        let keys = try workspace.expectSuccess(["list", workspace.store, "c", "--json"]).objects().map { $0["key"] as? String }
        #expect(keys == ["1", "2"])
    }

    @Test(arguments: [
        (#"{"put":{"c":"c","k":"k"}}"#, "\"v\""),
        (#"{"upsert":{"c":"c","k":"k","v":1}}"#, "unknown operation"),
        (#"{"put":{"c":"c","k":"k","v":1,"x":2}}"#, "unknown field \"x\""),
        (#"{"delete":{"c":"c"}}"#, "\"k\""),
        (#"{"put":{"c":"","k":"k","v":1}}"#, "\"c\""),
        (#"{"put":{"c":"c","k":7,"v":1}}"#, "\"k\""),
        (#"[]"#, "empty array"),
        (#"[{"put":{"c":"c","k":"k","v":1}}, 5]"#, "expected {"),
        (#""just a string""#, "expected an object"),
    ])
    func malformedOperationsAreBadLines(_ line: String, _ message: String) throws {
        let workspace = try Workspace.withStore()
        let before = try workspace.storeBytes()
        let result = try workspace.run(["apply", workspace.store], stdin: line + "\n")
        #expect(result.exitCode == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("chrono: line 1: "))
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
        #expect(try workspace.storeBytes() == before)
    }

    @Test func deletingAMissingKeyStopsWithExitOneNamingTheLine() throws {
        let workspace = try Workspace.withStore()
        let input = #"{"put":{"c":"c","k":"1","v":1}}"# + "\n" + #"[{"put":{"c":"c","k":"2","v":2}},{"delete":{"c":"c","k":"zz"}}]"#
        let result = try workspace.run(["apply", workspace.store], stdin: input)
        #expect(result.exitCode == 1)
        #expect(result.stdout == "2\n")
        #expect(result.stderr == "chrono: line 2: no key \"zz\" in collection \"c\"\n")
        try workspace.expectFailure(["get", workspace.store, "c", "2"], exitCode: 1, message: "no key")
    }

    @Test func aBigApplyDrawsNoProgressWhenStderrIsNotATerminal() throws {
        let workspace = try Workspace.withStore()
        let input = (0..<150).map { #"{"put":{"c":"bulk","k":"key-\#($0)","v":\#($0)}}"# }.joined(separator: "\n")
        let result = try workspace.expectSuccess(["apply", workspace.store], stdin: input)
        #expect(result.stdout.split(separator: "\n").count == 150)
        let info = try workspace.expectSuccess(["info", workspace.store, "--json"]).object()
        #expect((info["collections"] as? [[String: Any]])?.first?["count"] as? Int == 150)
    }

    @Test func emptyInputCommitsNothing() throws {
        let workspace = try Workspace.withStore()
        let result = try workspace.expectSuccess(["apply", workspace.store], stdin: "")
        #expect(result.stdout.isEmpty)
    }
}
