// swift-tools-version: 6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "BLEMockKit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "BLECore", targets: ["BLECore"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "BLEMockKit", targets: ["BLEMockKit"]),
        .library(name: "BLEMockKitTesting", targets: ["BLEMockKitTesting"]),
        .library(name: "BLEMockKitXCTest", targets: ["BLEMockKitXCTest"]),
        .library(name: "BLECoreBluetooth", targets: ["BLECoreBluetooth"]),
        .library(name: "BLECapture", targets: ["BLECapture"]),
        .library(name: "BLECBM", targets: ["BLECBM"]),
        .executable(name: "mockble", targets: ["mockble"]),
    ],
    targets: [
        .target(name: "BLECore", swiftSettings: strictSettings),
        .target(name: "CTransportCRC32C"),
        .target(name: "Transport", dependencies: ["BLECore", "CTransportCRC32C"], swiftSettings: strictSettings),
        .target(name: "BLEMockKit", dependencies: ["BLECore", "Transport"], swiftSettings: strictSettings),
        // Test-framework glue: a Swift Testing trait and an XCTest helper that run tests on mock bridges.
        .target(
            name: "BLEMockKitTesting", dependencies: ["BLECore", "BLEMockKit", "BLECBM"], swiftSettings: strictSettings),
        .target(
            name: "BLEMockKitXCTest", dependencies: ["BLECore", "BLEMockKit", "BLECBM"], swiftSettings: strictSettings),
        .target(name: "BLECoreBluetooth", dependencies: ["BLECore"], swiftSettings: strictSettings),
        .target(name: "BLECapture", dependencies: ["BLECore", "BLEMockKit"], swiftSettings: strictSettings),
        .target(name: "BLECBM", dependencies: ["BLECore", "BLEMockKit"], swiftSettings: strictSettings),
        .target(
            name: "MockbleCLI", dependencies: ["BLECore", "Transport", "BLEMockKit", "BLECapture", "BLECBM"],
            swiftSettings: strictSettings),
        .executableTarget(name: "mockble", dependencies: ["MockbleCLI"], swiftSettings: strictSettings),
        .testTarget(name: "BLECoreTests", dependencies: ["BLECore"], swiftSettings: strictSettings),
        // An nRF Blinky-style app written in CoreBluetooth delegate style, in Swift 5 mode as
        // most apps are, compiled unchanged against BLECBM through its typealias file.
        .target(
            name: "BlinkyExample", dependencies: ["BLECBM"], path: "Tests/BlinkyExample",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        // The typealias file BLECBM ships (in its documentation catalog), compiled in Swift 6
        // mode; BlinkyExample compiles it in Swift 5 mode.
        .target(
            name: "CoreBluetoothTypeAliasesSwift6", dependencies: ["BLECBM"],
            path: "Tests/CoreBluetoothTypeAliasesSwift6", swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(
            name: "BLECBMTests",
            dependencies: [
                "BLECBM", "BLEMockKit", "BLECore", "BlinkyExample", "CoreBluetoothTypeAliasesSwift6", "BLECapture",
                "BLEMockKitTesting",
            ],
            swiftSettings: strictSettings),
        // Mock definitions in CoreBluetoothMock's style, in Swift 5 mode as such test targets are.
        .testTarget(
            name: "CoreBluetoothMockStyleTests", dependencies: ["BLECBM", "BLEMockKit", "BLECore", "BlinkyExample"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "BLECoreBluetoothTests", dependencies: ["BLECoreBluetooth", "BLECore", "BLEMockKit"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TransportTests", dependencies: ["Transport", "BLECore", "BLEMockKit"], swiftSettings: strictSettings),
        .testTarget(
            name: "BLECaptureTests", dependencies: ["BLECapture", "BLEMockKit", "BLECore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MockbleCLITests", dependencies: ["MockbleCLI", "BLEMockKit", "BLECore", "BLECapture"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "BLEMockKitTestingTests",
            dependencies: ["BLEMockKitTesting", "BLEMockKit", "BLECore", "BLECBM", "BlinkyExample"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "BLEMockKitXCTestTests",
            dependencies: ["BLEMockKitXCTest", "BLEMockKit", "BLECore", "BLECBM", "BlinkyExample"],
            swiftSettings: strictSettings),
        // The bundled fixtures as a user of the package sees them: public API only.
        .testTarget(
            name: "BundledFixturesTests", dependencies: ["BLEMockKit", "BLECore"], swiftSettings: strictSettings),
        .testTarget(
            name: "BLEMockKitTests",
            dependencies: ["BLEMockKit", "BLECore", "Transport", "BLECoreBluetooth", "BLECapture"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
