// swift-tools-version: 6.0
// ChronoStore: an embedded, zero-dependency, copy-on-write datastore with history.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ChronoStore",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "ChronoStoreEngine", targets: ["ChronoStoreEngine"]),
        .library(name: "ChronoStore", targets: ["ChronoStore"]),
        .library(name: "ChronoStoreRecipes", targets: ["ChronoStoreRecipes"]),
        .executable(name: "chrono-example", targets: ["ChronoExample"]),
        .executable(name: "chrono", targets: ["ChronoCLI"]),
    ],
    targets: [
        .target(name: "ChronoChecksum"),
        .target(name: "ChronoAtomics"),
        .target(name: "ChronoSystem"),
        .target(
            name: "ChronoStoreEngine",
            dependencies: ["ChronoChecksum", "ChronoAtomics", "ChronoSystem"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChronoStore",
            dependencies: ["ChronoStoreEngine"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChronoStoreRecipes",
            dependencies: ["ChronoStore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChronoStoreTestSupport",
            dependencies: ["ChronoStoreEngine"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChronoExample",
            dependencies: ["ChronoStoreEngine"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChronoTestHelper",
            dependencies: ["ChronoStoreEngine"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChronoRecipeHelper",
            dependencies: ["ChronoStoreRecipes", "ChronoStore"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChronoCLI",
            dependencies: ["ChronoStoreEngine", "ChronoStore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChronoCLITests",
            dependencies: ["ChronoCLI", "ChronoStore", "ChronoStoreTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChronoStoreTests",
            dependencies: ["ChronoStore", "ChronoStoreEngine", "ChronoStoreTestSupport", "ChronoTestHelper"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChronoStoreRecipesTests",
            dependencies: ["ChronoStoreRecipes", "ChronoStore", "ChronoStoreTestSupport", "ChronoRecipeHelper"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChronoStoreEngineTests",
            dependencies: ["ChronoStoreEngine", "ChronoStoreTestSupport", "ChronoTestHelper"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
