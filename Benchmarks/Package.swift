// swift-tools-version: 6.0
// ChronoStore benchmarks: `chrono-bench` runs each workload on ChronoStore and on SQLite (through GRDB).
import PackageDescription

// `Sources/ChronoStoreEngine` is a symlink to the root package's engine sources. The engine's API
// has `package` access, which only modules of the same package can use, so the benchmark builds
// its own copy of the engine module instead of depending on the root package by path (see
// README.md). SwiftPM refuses a target `path:` outside the package directory, hence the symlink.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ChronoBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "chrono-bench", targets: ["ChronoBench"])
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0")
    ],
    targets: [
        .target(
            name: "ChronoStoreEngine",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChronoBench",
            dependencies: [
                "ChronoStoreEngine",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
