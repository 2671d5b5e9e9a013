// swift-tools-version: 6.0
// libFuzzer targets for BLEMockKit. They live in their own package because building with
// `-sanitize=fuzzer` links libFuzzer's `main`, which clashes with the parent package's
// `mockble` executable. Build and run them with `scripts/fuzz.sh` from the repository root.
import PackageDescription

let fuzzSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Each target exports `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
    .unsafeFlags(["-parse-as-library"]),
]

let package = Package(
    name: "FuzzTesting",
    dependencies: [.package(name: "BLEMockKit", path: "..")],
    targets: [
        // Supplies the `<Module>_main` symbols SwiftPM's link step asks for (see its source).
        .target(name: "FuzzEntryPoints"),
        // What the fixture and recording targets check of every load (the same for both).
        .target(
            name: "FuzzFixtureChecks", dependencies: [.product(name: "BLEMockKit", package: "BLEMockKit")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]),
        .executableTarget(
            name: "FuzzReassembly",
            dependencies: [
                "FuzzEntryPoints", .product(name: "Transport", package: "BLEMockKit"),
            ],
            swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzFixtures",
            dependencies: [
                "FuzzEntryPoints", "FuzzFixtureChecks", .product(name: "BLEMockKit", package: "BLEMockKit"),
            ],
            swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzScenarioRun",
            dependencies: [
                "FuzzEntryPoints", .product(name: "BLEMockKit", package: "BLEMockKit"),
            ],
            swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzCapture",
            dependencies: [
                "FuzzEntryPoints", .product(name: "BLECapture", package: "BLEMockKit"),
            ],
            swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzRecording",
            dependencies: [
                "FuzzEntryPoints", "FuzzFixtureChecks", .product(name: "BLECapture", package: "BLEMockKit"),
                .product(name: "BLEMockKit", package: "BLEMockKit"),
            ],
            swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzUUID",
            dependencies: [
                "FuzzEntryPoints", .product(name: "BLECore", package: "BLEMockKit"),
            ],
            swiftSettings: fuzzSettings),
    ],
    swiftLanguageModes: [.v6]
)
