// verify, and damaged, foreign or missing store files: exit codes 3 and 4, one line each.
import Foundation
import Testing

@Suite("verify and damage")
struct VerifyAndDamageTests {
    /// A store whose only record holds `marker`, with one byte of every copy of it flipped.
    private func damagedStore() throws -> Workspace {
        let workspace = try Workspace.withStore()
        let marker = "DAMAGE-MARKER-" + String(repeating: "x", count: 40)
        try workspace.put("c", "k", "\"\(marker)\"")
        var bytes = [UInt8](try workspace.storeBytes())
        let needle = Array(marker.utf8)
        var flipped = 0
        for start in 0...(bytes.count - needle.count) where Array(bytes[start..<(start + needle.count)]) == needle {
            bytes[start + 3] ^= 0xFF
            flipped += 1
        }
        try #require(flipped > 0)
        try Data(bytes).write(to: URL(fileURLWithPath: workspace.store))
        return workspace
    }

    @Test func verifyReportsASoundStore() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let report = try workspace.expectSuccess(["verify", workspace.store, "--json"]).object()
        #expect(Set(report.keys) == ["ok", "pagesChecked", "problems"])
        #expect(report["ok"] as? Bool == true)
        #expect((report["pagesChecked"] as? Int ?? 0) > 0)
        #expect((report["problems"] as? [String]) == [])
        #expect(try workspace.expectSuccess(["verify", workspace.store]).stdout.hasPrefix("OK: "))
    }

    @Test func verifyFindsDamageAndExitsThree() throws {
        let workspace = try damagedStore()
        let result = try workspace.run(["verify", workspace.store, "--json"])
        #expect(result.exitCode == 3)
        let report = try result.object()
        #expect(report["ok"] as? Bool == false)
        let problems = try #require(report["problems"] as? [String])
        #expect(problems.contains { $0.contains("checksum") })
        #expect(result.stderrLines == ["chrono: the store is damaged: \(problems.count) problem\(problems.count == 1 ? "" : "s") found"])
    }

    @Test func readingADamagedPageExitsThreeNamingThePage() throws {
        let workspace = try damagedStore()
        try workspace.expectFailure(["get", workspace.store, "c", "k"], exitCode: 3, message: "is damaged: checksum mismatch")
        try workspace.expectFailure(["list", workspace.store, "c"], exitCode: 3, message: "page ")
    }

    @Test func aMissingStoreExitsFourAndCreatesNothing() throws {
        let workspace = try Workspace()
        for arguments in [["get", workspace.store, "c", "k"], ["info", workspace.store], ["verify", workspace.store], ["history", workspace.store]] {
            try workspace.expectFailure(arguments, exitCode: 4, message: "no store at")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path).isEmpty)
    }

    @Test func aFileThatIsNotAStoreExitsFourAndIsLeftAlone() throws {
        let workspace = try Workspace()
        let contents = Data(String(repeating: "not a store\n", count: 1000).utf8)
        try contents.write(to: URL(fileURLWithPath: workspace.store))
        try workspace.expectFailure(["info", workspace.store], exitCode: 4, message: "is not a ChronoStore file")
        try workspace.expectFailure(["put", workspace.store, "c", "k", "1"], exitCode: 4, message: "is not a ChronoStore file")
        #expect(try workspace.storeBytes() == contents)
        #expect(!FileManager.default.fileExists(atPath: workspace.store + ".lock"))
    }

    @Test func aStoreFromAFutureFormatExitsFour() throws {
        let workspace = try Workspace.withStore()
        var bytes = [UInt8](try workspace.storeBytes())
        bytes[8] = 99  // the format version (little-endian UInt32 at offset 8)
        let checksum = CRC32C.checksum(bytes[0..<60])
        for index in 0..<4 { bytes[60 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(index))) }
        try Data(bytes).write(to: URL(fileURLWithPath: workspace.store))
        try workspace.expectFailure(["info", workspace.store], exitCode: 4, message: "format version 99 is newer")
    }
}

/// CRC-32C (Castagnoli), as the store's preamble uses, to forge a future-format header.
enum CRC32C {
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}
