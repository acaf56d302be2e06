// Group commit across processes: threads of several processes commit at once, and a process
// killed while its commits share syncs loses none it acknowledged.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Group commit across processes")
struct GroupCommitProcessTests {
    @Test func threadsOfTwoProcessesCommittingAtOnceKeepEveryCommitInOrder() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-group")
        let path = directory.file("shared.chrono")
        try Store.create(at: path).close()

        let outputs = try TestHelperProcess.runAll([
            ["write-threads", path, "a", "4", "15"], ["write-threads", path, "b", "4", "15"],
        ])
        let acknowledged = outputs.flatMap { $0.split(separator: "\n") }.filter { $0.hasPrefix("acknowledged ") }
        #expect(acknowledged.count == 120)

        let store = try Store.open(at: path)
        defer { try? store.close() }
        let values = try store.read { reader in
            var values: [Int] = []
            try reader.scan("shared", range: .all, reverse: false) { _, value in
                values.append(Int(text(value) ?? "") ?? -1)
                return true
            }
            return values.sorted()
        }
        // Each transaction saw every commit before it, in this process or the other.
        #expect(values == Array(0..<120))
        #expect(try store.verify().problems == [])
    }

    @Test func aProcessKilledWhileItsThreadsCommitLosesNoAcknowledgedCommit() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-group")
        let path = directory.file("shared.chrono")
        try Store.create(at: path).close()

        let helper = try TestHelperProcess.start(["write-threads", path, "k", "4", "500"])
        var printed = ""
        let reading = helper.output.fileHandleForReading
        while printed.components(separatedBy: "acknowledged ").count <= 40 {
            let chunk = reading.availableData
            if chunk.isEmpty { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        kill(helper.process.processIdentifier, SIGKILL)
        let rest = helper.finish()
        printed += rest.output
        let acknowledged = printed.split(separator: "\n").filter { $0.hasPrefix("acknowledged ") }
            .map { String($0.dropFirst("acknowledged ".count)) }
        #expect(acknowledged.count >= 40)

        let store = try Store.open(at: path)
        defer { try? store.close() }
        let lost = try store.read { reader in try acknowledged.filter { try reader.value(forKey: bytes($0), in: "shared") == nil } }
        #expect(lost.isEmpty, "acknowledged but lost: \(lost.prefix(5))")
        #expect(try store.verify().problems == [])
        try store.write { try $0.put(bytes("after"), bytes("x"), in: "shared") }
        #expect(text(try store.read { try $0.value(forKey: bytes("after"), in: "shared") }) == "x")
    }
}
