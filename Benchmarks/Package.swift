// swift-tools-version: 6.0
// ChronoStore benchmarks: `chrono-bench` runs each workload on ChronoStore and on SQLite (through GRDB).
import PackageDescription

// `Sources/ChronoStoreEngine`, `Sources/ChronoChecksum`, `Sources/ChronoAtomics`, `Sources/ChronoSystem` and `Sources/ChronoStore` are symlinks to the root package's
// sources. The engine's API has `package` access, which only modules of the same package can
// use, so the benchmark builds its own copy of the engine (and of the typed API on top of it,
// which cannot come from the root package without a second engine module) instead of depending
// on the root package by path (see README.md). SwiftPM refuses a target `path:` outside the
// package directory, hence the symlinks.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ChronoBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "chrono-bench", targets: ["ChronoBench"]),
        .executable(name: "chrono-profile", targets: ["ChronoProfile"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0")
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
        // The typed workloads' event record, shared by both executables.
        .target(
            name: "TypedEvents",
            dependencies: ["ChronoStore"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChronoBench",
            dependencies: [
                "ChronoStoreEngine",
                "ChronoStore",
                "TypedEvents",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        // One engine or typed-API workload per process, for callgrind and timings (no SQLite).
        .executableTarget(
            name: "ChronoProfile",
            dependencies: ["ChronoStoreEngine", "ChronoStore", "TypedEvents"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
