// swift-tools-version: 6.2
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, whatever the clone is called.
let gatewayPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("..").standardizedFileURL.lastPathComponent

// Coverage-guided fuzz targets (libFuzzer) for every parser that reads bytes
// from outside. A package of its own, so the gateway's build never sees the
// sanitizer flags. Build and run: scripts/fuzz [seconds].
let package = Package(
    name: "identity-gateway-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .executableTarget(
            name: "gateway-fuzz",
            dependencies: [
                .product(name: "GatewayLibraries", package: gatewayPackage),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
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
