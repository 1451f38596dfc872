// swift-tools-version: 6.2
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, whatever the clone is called.
let gatewayPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL.lastPathComponent

// Microbenchmarks of the token hot path (ordo-one/benchmark). A package of its
// own, so the gateway's build never sees the benchmark dependencies.
// Run: cd Benchmarks/micro && swift package benchmark
let package = Package(
    name: "identity-gateway-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "GatewayBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GatewayBenchmarkWorkloads", package: gatewayPackage),
            ],
            path: "Benchmarks/GatewayBenchmarks",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
