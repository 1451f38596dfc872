// swift-tools-version: 6.0
import PackageDescription

/// The library apps use to sign in to an identity gateway and answer every
/// Layer challenge. A package of its own, with no dependencies: an app that
/// adds it resolves and builds nothing of the server (whose manifest needs
/// macOS 15, PostgreSQL's driver, SwiftNIO and system libraries).
let package = Package(
    name: "IdentityGatewayClient",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "IdentityGatewayClient", targets: ["IdentityGatewayClient"])
    ],
    targets: [
        .target(
            name: "IdentityGatewayClient",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        )
    ]
)
