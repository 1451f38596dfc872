// swift-tools-version: 6.2
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, whatever the clone is called.
let gatewayPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("..").standardizedFileURL.lastPathComponent

// libFuzzer's executable over the fuzz targets (Fuzz/Targets, the
// gateway's GatewayFuzzTargets library, built and replayed by every
// ./scripts/test). A package of its own, so the gateway's build never sees
// the sanitizer flags. Build and run: scripts/fuzz [seconds].
let package = Package(
    name: "identity-gateway-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "..")
    ],
    targets: [
        .executableTarget(
            name: "gateway-fuzz",
            dependencies: [.product(name: "GatewayFuzzTargets", package: gatewayPackage)],
            path: "Sources/GatewayFuzz",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
                // libFuzzer brings `main`.
                .unsafeFlags(["-parse-as-library"]),
            ],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
