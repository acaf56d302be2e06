// Several processes sharing one store: writers take turns, readers keep their root, commits stay seen.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// Runs the `chrono-test-helper` executable built beside the test bundle.
enum TestHelperProcess {
    /// The helper executable (`chrono-test-helper`, or `ChronoTestHelper` as SwiftPM names it).
    static func executable() throws -> URL { try BuiltExecutable.url(named: "chrono-test-helper", "ChronoTestHelper") }

    /// A started helper and its captured output.
    struct Running {
        let process: Process
        let output: Pipe
        let errors: Pipe

        var isRunning: Bool { process.isRunning }

        /// Waits for the helper to exit; returns its status and what it printed.
        func finish() -> (status: Int32, output: String, errors: String) {
            let output = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let errors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, output, errors)
        }
    }

    static func start(_ arguments: [String]) throws -> Running {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return Running(process: process, output: output, errors: errors)
    }

    /// Runs helpers at once and waits for them all; expects each to exit with status 0.
    @discardableResult
    static func runAll(_ argumentLists: [[String]], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let running = try argumentLists.map { try start($0) }
        return running.map { helper in
            let (status, output, errors) = helper.finish()
            #expect(status == 0, "helper \(helper.process.arguments ?? []) failed: \(errors)", sourceLocation: sourceLocation)
            return output
        }
    }
}

/// Whether two scanned entries are equal.
private func sameEntry(_ lhs: ([UInt8], [UInt8]), _ rhs: ([UInt8], [UInt8])) -> Bool { lhs.0 == rhs.0 && lhs.1 == rhs.1 }

@Suite("Multiple processes")
struct MultiProcessTests {
    /// Every value a "write" helper stored is the collection's count it saw in its transaction;
    /// writers that truly take turns see every count from 0 to n − 1 exactly once.
    private func expectSerialCounts(_ reader: ReadTransaction, total: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let all = try entries(reader, "shared")
        #expect(all.count == total, sourceLocation: sourceLocation)
        let seen = all.compactMap { text($0.1).flatMap { Int($0) } }.sorted()
        #expect(seen == Array(0..<total), "some transactions did not see their predecessors", sourceLocation: sourceLocation)
    }

    @Test func twoProcessesWritingAtOnceCommitEveryTransactionInTurn() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("shared.chrono")
        try Store.create(at: path).close()

        try TestHelperProcess.runAll([["write", path, "a", "50"], ["write", path, "b", "50"]])

        let store = try Store.open(at: path)
        defer { try? store.close() }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try reader.count(in: "shared") == 100)
        for prefix in ["a", "b"] {
            for index in 0..<50 { #expect(try reader.value(forKey: bytes("\(prefix)-\(index)"), in: "shared") != nil) }
        }
        try expectSerialCounts(reader, total: 100)
        #expect(try store.verify().problems == [])
    }

    @Test func openStoreSeesOtherProcessesCommitsAtItsNextTransaction() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("shared.chrono")
        let store = try Store.create(at: path)
        defer { try? store.close() }
        try store.write { try $0.put(bytes("local-0"), bytes("0"), in: "shared") }
        #expect(try store.beginRead().count(in: "shared") == 1)

        try TestHelperProcess.runAll([["write", path, "a", "50"], ["write", path, "b", "50"]])

        do {
            let reader = try store.beginRead()
            defer { reader.close() }
            #expect(try reader.count(in: "shared") == 101)
            #expect(text(try reader.value(forKey: bytes("b-49"), in: "shared")) != nil)
            // Counts 1 ... 100 came from the helpers, 0 from this process.
            let seen = try entries(reader, "shared").compactMap { text($0.1).flatMap { Int($0) } }.sorted()
            #expect(seen == [0] + Array(1...100))
        }
        // This process's next write builds on the other processes' commits, and they see it.
        try store.write { transaction in
            let count = try transaction.count(in: "shared")
            #expect(count == 101)
            try transaction.put(bytes("local-1"), bytes("\(count)"), in: "shared")
        }
        let outputs = try TestHelperProcess.runAll([["count", path, "shared"]])
        #expect(outputs.first?.trimmingCharacters(in: .whitespacesAndNewlines) == "102")
        #expect(try store.verify().problems == [])
    }

    @Test func writersInThisAndOtherProcessesTakeTurns() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("shared.chrono")
        let store = try Store.create(at: path)
        defer { try? store.close() }

        let helpers = try [["write", path, "a", "40"], ["write", path, "b", "40"]].map { try TestHelperProcess.start($0) }
        for index in 0..<40 {
            try store.write { transaction in
                let seen = try transaction.count(in: "shared")
                try transaction.put(bytes("c-\(index)"), bytes("\(seen)"), in: "shared")
            }
        }
        for helper in helpers {
            let (status, _, errors) = helper.finish()
            #expect(status == 0, "\(errors)")
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        try expectSerialCounts(reader, total: 120)
        #expect(try store.verify().problems == [])
    }

    /// This process commits while a helper commits, once more after the helper's last commit,
    /// and then waits while the helper closes: the helper's close must not hide that commit.
    /// Regression (found at 9cc843b; see `closingOrSyncingAStoreKeepsAnotherWritersNewerCommit`):
    /// the helper's close overwrote the slot holding this process's commit, nearly every run.
    @Test func anotherProcessClosingKeepsTheCommitsMadeAfterItsLast() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("shared.chrono")
        let store = try Store.create(at: path)
        defer { try? store.close() }
        let helper = try TestHelperProcess.start(["write", path, "h", "30"])
        var local = 0
        var helperFinishedWriting = false
        while !helperFinishedWriting {
            try store.write { transaction in
                helperFinishedWriting = try transaction.value(forKey: bytes("h-29"), in: "shared") != nil
                let seen = try transaction.count(in: "shared")
                try transaction.put(bytes("p-\(local)"), bytes("\(seen)"), in: "shared")
            }
            local += 1
        }
        let (status, _, errors) = helper.finish()
        #expect(status == 0, "\(errors)")
        // A process opening the store now sees every commit of both.
        let outputs = try TestHelperProcess.runAll([["count", path, "shared"]])
        #expect(outputs.first?.trimmingCharacters(in: .whitespacesAndNewlines) == "\(30 + local)")
        let reader = try store.beginRead()
        defer { reader.close() }
        try expectSerialCounts(reader, total: 30 + local)
    }

    /// Two stores open on one file coordinate through the lock file exactly as two processes do.
    /// Regression (found at 9cc843b): `close()` and `synchronize()` marked the store's own, stale
    /// state verified in a header slot without reading the header first, overwriting the slot
    /// that held another writer's newer commit; the next opener no longer saw that commit.
    @Test(arguments: ["close", "synchronize"])
    func closingOrSyncingAStoreKeepsAnotherWritersNewerCommit(operation: String) throws {
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("shared.chrono")
        let first = try Store.create(at: path)
        let second = try Store.open(at: path)
        try first.write { try $0.put(bytes("from-first"), bytes("1"), in: "shared") }
        try second.write { try $0.put(bytes("from-second"), bytes("2"), in: "shared") }
        if operation == "close" { try first.close() } else { try first.synchronize() }

        let third = try Store.open(at: path)
        defer { try? third.close() }
        do {
            let reader = try third.beginRead()
            defer { reader.close() }
            #expect(try reader.count(in: "shared") == 2)
            #expect(text(try reader.value(forKey: bytes("from-second"), in: "shared")) == "2")
        }
        try third.write { try $0.put(bytes("from-third"), bytes("3"), in: "shared") }
        try second.write { try $0.put(bytes("from-second-again"), bytes("4"), in: "shared") }
        let reader = try third.beginRead()
        defer { reader.close() }
        let keys = try entries(reader, "shared").compactMap { text($0.0) }
        #expect(keys == ["from-first", "from-second", "from-second-again", "from-third"])
        #expect(try third.verify().problems == [])
        try second.close()
    }

    /// A reader's root stays whole while other processes commit, prune and reuse pages: this
    /// process advertises its oldest root in the lock file, and their writers respect it.
    @Test func readerKeepsItsRootWhileOtherProcessesCommit() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("shared.chrono")
        let store = try Store.create(at: path)
        defer { try? store.close() }
        try store.write { transaction in
            for index in 0..<400 {
                try transaction.put(bytes("init-\(index)"), bytes("initial \(index) " + String(repeating: "s", count: 60)), in: "shared")
                try transaction.put(bytes("base-\(index)"), bytes("base \(index) " + String(repeating: "b", count: 60)), in: "base")
            }
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        let root = reader.root.transaction
        let shared = try entries(reader, "shared")
        let base = try entries(reader, "base")

        let helpers = try [["write", path, "a", "50"], ["write", path, "b", "50"]].map { try TestHelperProcess.start($0) }
        var passes = 0
        var mismatches = 0
        while helpers.contains(where: \.isRunning) || passes == 0 {
            // Read everything the old root holds, from disk as much as the cache allows.
            store.pageFile.cache.removeAll()
            if try entries(reader, "shared").elementsEqual(shared, by: sameEntry) == false { mismatches += 1 }
            if try entries(reader, "base").elementsEqual(base, by: sameEntry) == false { mismatches += 1 }
            passes += 1
        }
        for helper in helpers {
            let (status, _, errors) = helper.finish()
            #expect(status == 0, "\(errors)")
        }
        print("readerKeepsItsRootWhileOtherProcessesCommit: \(passes) passes over the old root while helpers ran")
        #expect(mismatches == 0, "the old root changed under its reader in \(mismatches) of \(passes) passes")
        store.pageFile.cache.removeAll()
        #expect(reader.root.transaction == root)
        #expect(try reader.count(in: "shared") == 400)
        #expect(try entries(reader, "shared").elementsEqual(shared, by: sameEntry))
        #expect(try entries(reader, "base").elementsEqual(base, by: sameEntry))

        let fresh = try store.beginRead()
        defer { fresh.close() }
        // The helpers' 100 commits are the 100 roots after the reader's (their packing commits
        // took ids too, but made no roots).
        let newer = try store.history(limit: 200).filter { $0.id > root }
        #expect(newer.count == 100 && newer.first?.id == fresh.root.transaction, "\(newer.count) roots after the reader's")
        #expect(try fresh.count(in: "shared") == 500)
        #expect(try store.verify().problems == [])
    }
}
