// `chrono create` and `chrono info`: new stores, their options, and what info reports.
import Foundation
import Testing

@Suite("create and info")
struct CreateAndInfoTests {
    @Test func createMakesAnEmptyStoreWhoseHeadIsRootOne() throws {
        let workspace = try Workspace()
        let result = try workspace.expectSuccess(["create", workspace.store, "--json"])
        let created = try result.object()
        #expect(created["root"] as? Int == 1)
        #expect(created["pageSize"] as? Int == 4096)
        #expect(created["retention"] as? String == "last:1000")
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.count == 1)
        #expect(history.first?["id"] as? Int == 1)
    }

    @Test func createTakesPageSizeAndRetention() throws {
        let workspace = try Workspace()
        try workspace.expectSuccess(["create", workspace.store, "--page-size", "16384", "--retention", "days:30"])
        let info = try workspace.expectSuccess(["info", workspace.store, "--json"]).object()
        #expect(info["pageSize"] as? Int == 16384)
        #expect(info["retention"] as? String == "days:30")
    }

    @Test func createWithSecureDeleteKeepsTheSettingInTheStore() throws {
        let workspace = try Workspace()
        let created = try workspace.expectSuccess(["create", workspace.store, "--secure-delete", "--json"]).object()
        #expect(created["secureDelete"] as? Bool == true)
        let plain = try Workspace()
        let other = try plain.expectSuccess(["create", plain.store, "--json"]).object()
        #expect(other["secureDelete"] as? Bool == false)
        // Flag bit 1 of the state's flags byte (offset 161 of the state page named by slot 0).
        let image = try [UInt8](Data(contentsOf: URL(fileURLWithPath: workspace.store)))
        let statePage = Int(image[520]) | Int(image[521]) << 8
        #expect(image[statePage * 4096 + 161] & 2 == 2)
    }

    @Test func createRefusesAnExistingPathAndLeavesItUntouched() throws {
        let workspace = try Workspace()
        let contents = Data("precious".utf8)
        try contents.write(to: URL(fileURLWithPath: workspace.store))
        try workspace.expectFailure(["create", workspace.store], exitCode: 4, message: "already exists")
        #expect(try workspace.storeBytes() == contents)
        #expect(!FileManager.default.fileExists(atPath: workspace.store + ".lock"))
    }

    @Test(arguments: [["--page-size", "5000"], ["--page-size", "1024"], ["--page-size", "big"], ["--retention", "forever"], ["--retention", "last:0"]])
    func createRejectsBadOptionsWithoutCreatingAFile(_ options: [String]) throws {
        let workspace = try Workspace()
        try workspace.expectFailure(["create", workspace.store] + options, exitCode: 2, message: options[0])
        #expect(!FileManager.default.fileExists(atPath: workspace.store))
    }

    @Test func infoReportsFormatSizesHeadRetentionAndCollections() throws {
        let workspace = try Workspace.withStore("--retention", "all")
        try workspace.put("notes", "a", "1")
        try workspace.put("notes", "b", "2")
        let head = try workspace.put("tags", "x", "true")
        let info = try workspace.expectSuccess(["info", workspace.store, "--json"]).object()
        #expect(info["formatVersion"] as? Int == 5)
        #expect(info["packedBytes"] as? Int == 0)
        #expect((info["hotBytes"] as? Int ?? 0) > 0)
        #expect(info["pageSize"] as? Int == 4096)
        let fileBytes = try #require(info["fileBytes"] as? Int)
        #expect(fileBytes == (try workspace.storeBytes().count))
        #expect((info["livePages"] as? Int ?? 0) > 0)
        #expect(info["freePages"] is Int)
        #expect(info["retainedRoots"] as? Int == 4)
        #expect(info["head"] as? Int == head)
        #expect(info["retention"] as? String == "all")
        let collections = try #require(info["collections"] as? [[String: Any]])
        #expect(collections.map { $0["name"] as? String } == ["notes", "tags"])
        #expect(collections.map { $0["count"] as? Int } == [2, 1])
        let text = try workspace.expectSuccess(["info", workspace.store]).stdout
        #expect(text.contains("format version   5"))
        #expect(text.contains("packed bytes     0 (0 old page versions in 0 pack pages)"))
        #expect(text.contains("head             root \(head)"))
        #expect(text.contains("head reads packs no"))
        #expect(info["headReadsPacks"] as? Bool == false)
    }
}
