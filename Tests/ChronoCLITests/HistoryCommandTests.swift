// history, undo, redo, revert, prune and reading older roots with --at.
import Foundation
import Testing

@Suite("history, undo, redo, revert, prune")
struct HistoryCommandTests {
    @Test func historyListsRetainedRootsNewestFirstInTheDocumentedShape() throws {
        let workspace = try Workspace.withStore()
        let first = try workspace.put("c", "k", "1", label: "First")
        let second = try workspace.put("c", "k", "2", label: "Second")
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.map { $0["id"] as? Int } == [second, first, 1])
        for entry in history {
            #expect(Set(entry.keys) == ["id", "parent", "time", "label", "head", "snapshots"])
            let time = try #require(entry["time"] as? String)
            #expect((try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(time)) != nil, "time \(time)")
            #expect(entry["snapshots"] as? [String] == [])
        }
        #expect(history.map { $0["parent"] as? Int } == [first, 1, nil])
        #expect(history[0]["parent"] as? Int == first)
        #expect(history[2]["parent"] is NSNull)
        #expect(history.map { $0["head"] as? Bool } == [true, false, false])
        #expect(history.map { $0["label"] as? String } == ["Second", "First", nil])
        let text = try workspace.expectSuccess(["history", workspace.store]).stdout
        #expect(text.contains("* \(second)"))
        #expect(text.contains("Second"))
    }

    @Test func undoAndRedoMoveTheHeadAndPrintIt() throws {
        let workspace = try Workspace.withStore()
        let first = try workspace.put("c", "k", "1")
        try workspace.put("c", "k", "2")
        try workspace.put("c", "k", "3")
        let undone = try workspace.expectSuccess(["undo", workspace.store, "--steps", "2", "--json"]).object()
        #expect(undone["root"] as? Int == first)
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k"]).stdout == "1\n")
        let redone = try workspace.expectSuccess(["redo", workspace.store, "--json"]).object()
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k"]).stdout == "2\n")
        #expect((redone["root"] as? Int ?? 0) > first)
        #expect(try workspace.expectSuccess(["undo", workspace.store]).stdout == "Undid 1 step; root \(first) is the head.\n")
    }

    @Test func theFirstCommitCanBeUndoneToAnEmptyStore() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        #expect(try workspace.expectSuccess(["undo", workspace.store, "--json"]).object()["root"] as? Int == 1)
        #expect(try workspace.expectSuccess(["list", workspace.store, "c", "--json"]).stdout == "[]\n")
        try workspace.expectFailure(["undo", workspace.store], exitCode: 4, message: "cannot undo")
    }

    @Test func undoPastTheOldestRootAndRedoWithNothingToRedoFailWithoutWriting() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let before = try workspace.storeBytes()
        try workspace.expectFailure(["undo", workspace.store, "--steps", "5"], exitCode: 4, message: "cannot undo")
        try workspace.expectFailure(["redo", workspace.store], exitCode: 4, message: "nothing to redo")
        #expect(try workspace.storeBytes() == before)
    }

    @Test func aCommitAfterUndoStartsABranchThatAllBranchesShows() throws {
        let workspace = try Workspace.withStore("--retention", "all")
        try workspace.put("c", "k", "1")
        let abandoned = try workspace.put("c", "k", "2")
        try workspace.expectSuccess(["undo", workspace.store])
        let branch = try workspace.put("c", "k", "3")
        let line = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects().map { $0["id"] as? Int }
        #expect(!line.contains(abandoned))
        #expect(line.first == branch)
        let all = try workspace.expectSuccess(["history", workspace.store, "--all-branches", "--json"]).objects()
        #expect(all.map { $0["id"] as? Int }.contains(abandoned))
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", String(abandoned)]).stdout == "2\n")
        #expect(try workspace.expectSuccess(["history", workspace.store, "--all-branches"]).stdout.contains("(branch tip)"))
    }

    @Test func limitPrintsTheNewestRowsOfTheListingAndBeforeContinuesIt() throws {
        let workspace = try Workspace.withStore()
        for index in 1...5 { try workspace.put("c", "k", String(index)) }
        let whole = try workspace.expectSuccess(["history", workspace.store]).stdout.split(separator: "\n")
        let first = try workspace.expectSuccess(["history", workspace.store, "--limit", "2"]).stdout.split(separator: "\n")
        #expect(first == Array(whole.prefix(3)))
        let page = try workspace.expectSuccess(["history", workspace.store, "--limit", "2", "--json"]).objects()
        let last = try #require(page.last?["id"] as? Int)
        let rest = try workspace.expectSuccess(["history", workspace.store, "--before", String(last)]).stdout.split(separator: "\n")
        #expect(Array(rest.dropFirst()) == Array(whole.dropFirst(3)))
        try workspace.expectFailure(["history", workspace.store, "--limit", "0"], exitCode: 2, message: "--limit")
        try workspace.expectFailure(["history", workspace.store, "--before", "999"], exitCode: 1, message: "not retained")
    }

    @Test func underLastNACommitAfterUndoDropsTheUndoneBranch() throws {
        let workspace = try Workspace.withStore("--retention", "last:100")
        try workspace.put("c", "k", "1")
        let abandoned = try workspace.put("c", "k", "2")
        try workspace.expectSuccess(["undo", workspace.store])
        let branch = try workspace.put("c", "k", "3")
        let all = try workspace.expectSuccess(["history", workspace.store, "--all-branches", "--json"]).objects()
        #expect(all.first?["id"] as? Int == branch)
        #expect(!all.map { $0["id"] as? Int }.contains(abandoned))
        try workspace.expectFailure(["get", workspace.store, "c", "k", "--at", String(abandoned)], exitCode: 1, message: "not retained")
    }

    @Test func revertCommitsANewRootWithAnOlderRootsContents() throws {
        let workspace = try Workspace.withStore()
        let first = try workspace.put("c", "k", "1")
        let second = try workspace.put("c", "k", "2")
        let reverted = try workspace.expectSuccess(["revert", workspace.store, String(first), "--label", "Back", "--json"]).object()
        let root = try #require(reverted["root"] as? Int)
        #expect(root > second)
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k"]).stdout == "1\n")
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.first?["label"] as? String == "Back")
        #expect(try workspace.expectSuccess(["undo", workspace.store, "--json"]).object()["root"] as? Int == second)
    }

    @Test func revertToAnUnknownRootExitsOne() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        try workspace.expectFailure(["revert", workspace.store, "999"], exitCode: 1, message: "root 999 is not retained")
        try workspace.expectFailure(["revert", workspace.store, "first"], exitCode: 2, message: "ROOT")
    }

    @Test func getAndListAtAnOlderRootByIdOrDate() throws {
        let workspace = try Workspace.withStore()
        let first = try workspace.put("c", "k", "1")
        for value in 2...4 { try workspace.put("c", "k", String(value)) }
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", String(first)]).stdout == "1\n")
        // Each root's own printed time names it (unless the next commit fell in the same millisecond).
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects().reversed().dropFirst()
        let times = history.map { $0["time"] as? String ?? "" }
        for (index, time) in times.enumerated() where index + 1 == times.count || times[index + 1] != time {
            #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", time]).stdout == "\(index + 1)\n")
            let listed = try workspace.expectSuccess(["list", workspace.store, "c", "--at", time, "--json"]).objects()
            #expect(listed.first?["value"] as? Int == index + 1)
        }
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", "2999-01-01"]).stdout == "4\n")
        // A time at or after the present reads the head, also after an undo.
        try workspace.expectSuccess(["undo", workspace.store])
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", "2999-01-01"]).stdout == "3\n")
    }

    @Test func aBadOrUnknownAtIsReported() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        try workspace.expectFailure(["get", workspace.store, "c", "k", "--at", "last tuesday"], exitCode: 2, message: "--at")
        try workspace.expectFailure(["get", workspace.store, "c", "k", "--at", "0"], exitCode: 2, message: "--at")
        try workspace.expectFailure(["get", workspace.store, "c", "k", "--at", "424242"], exitCode: 1, message: "not retained")
        try workspace.expectFailure(
            ["list", workspace.store, "c", "--at", "1999-12-31T23:59:59Z"], exitCode: 1,
            message: "no retained root was committed at or before 1999-12-31T23:59:59.000Z")
    }

    @Test func pruneKeepLastSetsRetentionAndDropsOlderRoots() throws {
        let workspace = try Workspace.withStore("--retention", "all")
        var roots: [Int] = []
        for value in 1...5 { roots.append(try workspace.put("c", "k", String(value))) }
        let pruned = try workspace.expectSuccess(["prune", workspace.store, "--keep-last", "2", "--json"]).object()
        #expect(pruned["dropped"] as? Int == 4)
        #expect(pruned["retainedRoots"] as? Int == 2)
        #expect(pruned["retention"] as? String == "last:2")
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.map { $0["id"] as? Int } == Array(roots.suffix(2).reversed()))
        try workspace.expectFailure(["get", workspace.store, "c", "k", "--at", String(roots[0])], exitCode: 1, message: "not retained")
    }

    @Test func pruneOlderThanKeepsRecentRoots() throws {
        let workspace = try Workspace.withStore("--retention", "all")
        try workspace.put("c", "k", "1")
        let result = try workspace.expectSuccess(["prune", workspace.store, "--older-than", "1"])
        #expect(result.stdout == "Dropped 0 roots; 2 retained (retention days:1).\n")
        try workspace.expectFailure(["prune", workspace.store, "--older-than", "1", "--keep-last", "1"], exitCode: 2, message: "not both")
        try workspace.expectFailure(["prune", workspace.store, "--keep-last", "0"], exitCode: 2, message: "--keep-last")
    }
}
