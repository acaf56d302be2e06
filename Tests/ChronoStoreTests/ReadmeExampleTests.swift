// Runs the README's typed example and checks that README.md shows ReadmeExample.swift unchanged.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct ReadmeExampleTests {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    @Test func theExampleRunsAndPrintsWhatTheReadmeSays() async throws {
        let directory = try TemporaryDirectory(prefix: "readme")
        let lines = try await calculatorExample(in: URL(fileURLWithPath: directory.path))
        #expect(lines == ["2 ^ 10 = 1024.0", "6 × 7 = 42.0", "1 + 1 = 2.0", "after undo: 3 calculations"])
        let backup = URL(fileURLWithPath: directory.file("calculator-backup.chrono"))
        let restored = try await ChronoStore.open(at: backup, createIfMissing: false)
        #expect(try await restored.datastore(CalculationFormat.self).count() == 3)
        try await restored.close()
    }

    @Test func theReadmeShowsTheExampleFileVerbatim() throws {
        let example = try String(contentsOf: Self.testsDirectory.appendingPathComponent("ReadmeExample.swift"), encoding: .utf8)
        let readmeURL = Self.testsDirectory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: readmeURL, encoding: .utf8)
        #expect(readme.contains("```swift\n" + example + "```\n"), "paste Tests/ChronoStoreTests/ReadmeExample.swift into README.md")
    }
}
