// put, get, delete and list: JSON values in and out, key order, ranges, and missing keys.
import Foundation
import Testing

@Suite("put, get, delete, list")
struct RecordCommandTests {
    @Test func getReturnsAnEqualDocumentWithNumbersAndEscapesAsWritten() throws {
        let workspace = try Workspace.withStore()
        let document = #"{ "b": [1, 2.50, {"c": null}], "a": "caf\u00e9 \"q\"", "n": -0.5e3, "t": true }"#
        try workspace.put("docs", "one", document)
        let result = try workspace.expectSuccess(["get", workspace.store, "docs", "one"])
        #expect(result.stdout == #"{"b":[1,2.50,{"c":null}],"a":"caf\u00e9 \"q\"","n":-0.5e3,"t":true}"# + "\n")
        let stored = try #require(try result.json() as? NSDictionary)
        let original = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? NSDictionary)
        #expect(stored == original)
        #expect(try workspace.expectSuccess(["get", workspace.store, "docs", "one", "--json"]).stdout == result.stdout)
    }

    @Test(arguments: ["42", "\"text\"", "null", "false", "[]", "{}"])
    func scalarAndEmptyDocumentsRoundTrip(_ value: String) throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", value)
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k"]).stdout == value + "\n")
    }

    @Test func putPrintsTheNewRootAndTheFirstPutCreatesTheCollection() throws {
        let workspace = try Workspace.withStore()
        let result = try workspace.expectSuccess(["put", workspace.store, "notes", "n1", #"{"t":1}"#, "--label", "Add"])
        #expect(result.stdout == "Stored notes/n1; root 2 is the head.\n")
        #expect(try workspace.put("notes", "n2", "2") == 3)
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.map { $0["label"] as? String } == [nil, "Add", nil])
    }

    @Test(arguments: ["{bad", "{\"a\":1,}", "01", "'single'", "[1] [2]", "", "nul"])
    func putRefusesInvalidJSONWithoutTouchingTheStore(_ value: String) throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let before = try workspace.storeBytes()
        try workspace.expectFailure(["put", workspace.store, "c", "k", value], exitCode: 2, message: "not JSON")
        #expect(try workspace.storeBytes() == before)
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k"]).stdout == "1\n")
    }

    @Test func putRefusesBadJSONEvenWhenTheStoreIsMissing() throws {
        let workspace = try Workspace()
        try workspace.expectFailure(["put", workspace.store, "c", "k", "{"], exitCode: 2, message: "not JSON")
        #expect(!FileManager.default.fileExists(atPath: workspace.store))
    }

    @Test func getAndDeleteOfAMissingKeyExitOneAndWriteNothing() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "present", "1")
        let before = try workspace.storeBytes()
        try workspace.expectFailure(["get", workspace.store, "c", "absent"], exitCode: 1, message: "no key \"absent\"")
        try workspace.expectFailure(["get", workspace.store, "nothing", "absent"], exitCode: 1, message: "no key")
        try workspace.expectFailure(["delete", workspace.store, "c", "absent"], exitCode: 1, message: "no key \"absent\"")
        #expect(try workspace.storeBytes() == before)
    }

    @Test func deleteRemovesTheKeyInANewRoot() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let deleted = try workspace.expectSuccess(["delete", workspace.store, "c", "k", "--json"]).object()
        #expect(deleted["root"] as? Int == 3)
        try workspace.expectFailure(["get", workspace.store, "c", "k"], exitCode: 1, message: "no key")
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", "2"]).stdout == "1\n")
    }

    @Test func listPrintsEntriesInKeyOrderAndHonoursRangeReverseAndLimit() throws {
        let workspace = try Workspace.withStore()
        let lines = ["b", "d", "a", "c", "é"].map { #"{"put":{"c":"letters","k":"\#($0)","v":"\#($0)!"}}"# }
        try workspace.expectSuccess(["apply", workspace.store], stdin: lines.joined(separator: "\n"))
        func keys(_ options: String...) throws -> [String] {
            let entries = try workspace.expectSuccess(["list", workspace.store, "letters", "--json"] + options).objects()
            return entries.map { $0["key"] as? String ?? "?" }
        }
        #expect(try keys() == ["a", "b", "c", "d", "é"])
        #expect(try keys("--reverse") == ["é", "d", "c", "b", "a"])
        #expect(try keys("--from", "b", "--to", "d") == ["b", "c", "d"])
        #expect(try keys("--from", "b", "--reverse", "--limit", "2") == ["é", "d"])
        #expect(try keys("--limit", "0") == [])
        let first = try workspace.expectSuccess(["list", workspace.store, "letters", "--json", "--limit", "1"]).objects()
        #expect(first.first?["value"] as? String == "a!")
        #expect(try workspace.expectSuccess(["list", workspace.store, "letters", "--limit", "2"]).stdout == "a\t\"a!\"\nb\t\"b!\"\n")
        #expect(try workspace.expectSuccess(["list", workspace.store, "none", "--json"]).stdout == "[]\n")
    }

    @Test func keysAndValuesMayStartWithDashes() throws {
        let workspace = try Workspace.withStore()
        try workspace.expectSuccess(["put", workspace.store, "c", "-k", "-5"])
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "-k"]).stdout == "-5\n")
        try workspace.expectSuccess(["put", workspace.store, "c", "--", "--odd", "1"])
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "--", "--odd"]).stdout == "1\n")
    }

    @Test func anEmptyKeyOrCollectionIsAUsageError() throws {
        let workspace = try Workspace.withStore()
        try workspace.expectFailure(["put", workspace.store, "c", "", "1"], exitCode: 2, message: "KEY")
        try workspace.expectFailure(["put", workspace.store, "", "k", "1"], exitCode: 2, message: "COLLECTION")
        try workspace.expectFailure(["put", workspace.store, "c", String(repeating: "k", count: 5000), "1"], exitCode: 2, message: "key")
    }
}
