// swift-tools-version: 6.2
import PackageDescription

/// Upcoming language features every target opts into: existential `any` spelled
/// out, imports visible only where they are written, and internal by default.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// Products several targets use, spelled once.
enum Products {
    static let coreMetrics: Target.Dependency = .product(name: "CoreMetrics", package: "swift-metrics")
    static let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
    static let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
    static let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
    static let hummingbirdTesting: Target.Dependency = .product(name: "HummingbirdTesting", package: "hummingbird")
    static let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
    static let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
    static let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
    static let postgresNIO: Target.Dependency = .product(name: "PostgresNIO", package: "postgres-nio")
    static let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")
    static let gatewayClient: Target.Dependency = .product(name: "IdentityGatewayClient", package: "IdentityGatewayClient")
    static let tracing: Target.Dependency = .product(name: "Tracing", package: "swift-distributed-tracing")
}

/// The credential plugins: a folder `Plugins/<name>/` each (with its own
/// `Migrations/` if it has tables, `Console/` if it adds console pages, with
/// their templates in `Console/Templates/`, and its tests in `Tests/`), built on the
/// seam, plus what else it and its tests use. Registered with one entry here
/// and one line in Sources/InstalledPlugins/InstalledPlugins.swift.
/// What a plugin's folder holds beside its sources, declared with it (the
/// manifest reads no folders; `PluginManifestTests` holds these to them).
enum PluginPart { case migrations, tests, console }

let credentialPlugins: [(name: String, parts: Set<PluginPart>, uses: [Target.Dependency], testsUse: [Target.Dependency])] = [
    ("StaticUsers", [.tests], [], []),
    (
        "Password", [.migrations, .tests, .console],
        [
            "Argon2", "GatewayCourier", .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            Products.nioPosix, Products.crypto,
        ],
        ["Argon2", .product(name: "HummingbirdBcrypt", package: "hummingbird-auth")]
    ),
    // Its tests install the password plugin too: a user deleted there takes their numbers along.
    ("PhoneCode", [.migrations, .tests, .console], ["GatewayCourier", "GatewayOutbound", Products.crypto], ["GatewayCourier", "GatewayOutbound", "PasswordPlugin", Products.crypto]),
    // The webhook and ID-token plugins use a password directory (PasswordDirectoryProvider, in the seam);
    // their tests install the password plugin that provides it.
    ("Webhook", [.tests], ["GatewayOutbound"], ["GatewayOutbound", "PasswordPlugin", Products.crypto]),
    // Sign in with Apple's revocations go through the courier's outbox.
    ("IDToken", [.migrations, .tests], ["GatewayCourier", "GatewayOutbound", Products.crypto, Products.cryptoExtras], ["GatewayCourier", "GatewayOutbound", "PasswordPlugin", Products.crypto]),
    // Passkeys: WebAuthn's CBOR, COSE keys (ES256, RS256, EdDSA) and ceremonies, written here; their tests
    // install the password plugin, whose disabled users a passkey does not sign in, and the phone plugin
    // beside it for the walk of every user change against every holder (UserLifecycleWalkTests).
    // Email codes: the courier's codes and outbox, the SMTP client (GatewayOutbound); its tests install the
    // password plugin, whose users' emails the codes sign in.
    ("EmailCode", [.console, .migrations, .tests], ["GatewayCourier", "GatewayOutbound", Products.crypto, Products.httpTypes], ["GatewayCourier", "GatewayOutbound", "PasswordPlugin", Products.crypto]),
    ("Passkey", [.console, .migrations, .tests], [Products.crypto, Products.cryptoExtras], [Products.crypto, "PasswordPlugin", "PhoneCodePlugin", "PasskeyTestSupport"]),
]

/// What every plugin builds on: the seam and the libraries its types speak. Calling out
/// (GatewayOutbound) is a plugin's own choice, in its `uses`; the runtime (GatewayRuntime) is not
/// a plugin's to import.
let pluginSeam: [Target.Dependency] = [
    "GatewayCore", "GatewayPluginKit", "GatewayPluginPostgres", "GatewayPostgres",
    Products.hummingbird, Products.logging,
    Products.nioCore, Products.postgresNIO,
    Products.coreMetrics, Products.tracing,
]

/// What every plugin's tests drive: a gateway over a test database or in memory.
let pluginTestSeam: [Target.Dependency] = [
    "GatewayCore", "GatewayPluginKit", "GatewayPluginPostgres", "GatewayRuntime", "GatewayPostgres", "GatewayHTTPTestSupport", "GatewayTestSupport",
    "StaticUsersPlugin",
    Products.hummingbirdTesting, Products.httpTypes,
    Products.logging, Products.nioCore,
    Products.postgresNIO,
]

let pluginTargets: [Target] = credentialPlugins.flatMap { plugin -> [Target] in
    let folder = "Plugins/\(plugin.name)"
    let hasMigrations = plugin.parts.contains(.migrations)
    let hasTests = plugin.parts.contains(.tests)
    let hasConsolePages = plugin.parts.contains(.console)
    let source = Target.target(
        name: "\(plugin.name)Plugin",
        dependencies: pluginSeam + (hasConsolePages ? ["GatewayConsoleKit"] : []) + plugin.uses,
        path: folder,
        exclude: (hasMigrations ? ["Migrations"] : []) + (hasTests ? ["Tests"] : [])
            + (hasConsolePages ? ["Console/Templates"] : []),
        swiftSettings: upcomingFeatures,
        plugins: (hasMigrations ? ["EmbedMigrations"] : []) + (hasConsolePages ? ["EmbedConsoleAssets"] : [])
    )
    guard hasTests else { return [source] }
    let tests = Target.testTarget(
        name: "\(plugin.name)PluginTests",
        // The static-users plugin is in the seam already; naming it twice is a manifest warning.
        dependencies: (plugin.name == "StaticUsers" ? [] : [.target(name: "\(plugin.name)Plugin")]) + pluginTestSeam
            + plugin.testsUse,
        path: "\(folder)/Tests",
        swiftSettings: upcomingFeatures
    )
    return [source, tests]
}

/// What every token profile builds on: the plugin API, without the database (a profile keeps no tables).
let profileSeam: [Target.Dependency] = [
    "GatewayCore", "GatewayPluginKit", Products.hummingbird, Products.logging, Products.nioCore, Products.httpTypes,
]

/// The token profiles besides Layer's (which the seam holds): a folder
/// `Profiles/<name>/` each, built on the seam, registered with one entry here
/// and one line in Sources/InstalledPlugins/InstalledPlugins.swift.
let tokenProfiles: [(name: String, uses: [Target.Dependency])] = [
    ("OIDC", []),
    ("Firebase", []),
    ("Stream", [Products.crypto]),
    ("Twilio", [Products.crypto]),
]

let profileTargets: [Target] = tokenProfiles.map { profile in
    .target(
        name: "\(profile.name)Profile",
        dependencies: profileSeam + profile.uses,
        path: "Profiles/\(profile.name)",
        swiftSettings: upcomingFeatures
    )
}

let package = Package(
    name: "identity-gateway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "identity-gateway", targets: ["identity-gateway"]),
        // The fuzz targets, for libFuzzer's executable in Fuzz/ (a package of its own, so the sanitizer
        // and coverage flags stay out of this build graph).
        .library(name: "GatewayFuzzTargets", targets: ["GatewayFuzzTargets"]),
        // The steps Benchmarks/micro times (a package of its own, so that its tools and build flags
        // stay out of this build graph), built here so that they cannot rot unseen.
        .library(name: "GatewayBenchmarkWorkloads", targets: ["GatewayBenchmarkWorkloads"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // The apps' client library: a package of its own, so an app resolves nothing of the server.
        .package(path: "Clients/IdentityGatewayClient"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // NIOHTTPTypesHTTP1, to place a channel handler beside Hummingbird's HTTP/1 codec (already in the graph
        // through Hummingbird).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Tests only: reads openapi.yaml (already in the graph through swift-configuration).
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["YAML"]),
        // Verifies imported bcrypt hashes (HummingbirdBcrypt) until they are upgraded to argon2id.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        // Metrics: swift-metrics in the libraries, exposed by the executable in Prometheus text.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Outbound HTTP: SMS providers and tenants' webhooks.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Optional native TLS on the HTTP listener (HummingbirdTLS is built on it).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The operator console's server-rendered pages.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // Traces: the span API in the libraries (already in the graph through Hummingbird), exported over
        // OTLP/HTTP by swift-otel in the executable. Its gRPC exporter is left out of the build.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: pluginTargets + profileTargets + [
        .target(
            name: "GatewayCore",
            dependencies: [
                Products.crypto, Products.cryptoExtras, Products.tracing,
            ],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "GatewayPostgres",
            dependencies: [
                "GatewayCore", Products.postgresNIO, Products.nioCore, Products.logging, Products.crypto,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), Products.coreMetrics,
                Products.tracing,
            ],
            swiftSettings: upcomingFeatures,
            // The core schema, from the top-level Migrations/ folder.
            plugins: ["EmbedMigrations"]
        ),
        // The seam: what a credential plugin or token profile sees (the plugin and
        // profile protocols, what the gateway lends them, the request context,
        // reading input, answering, the public-request gate, and the limits and
        // tenants as protocols). GatewayHTTP builds the gateway's own routes on the same.
        .target(
            name: "GatewayPluginKit",
            dependencies: [
                "GatewayCore", Products.hummingbird, Products.httpTypes, Products.logging,
                Products.nioCore, .product(name: "NIOHTTP1", package: "swift-nio"),
                Products.coreMetrics, Products.tracing,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The gateway's PostgreSQL as the plugins' SQL stores open it (PluginStorage.postgres): the adapter
        // beside the stores, so the plugin API and what builds only on it (HTTP, the console, the profiles)
        // link no database driver.
        .target(
            name: "GatewayPluginPostgres",
            dependencies: ["GatewayCore", "GatewayPluginKit", "GatewayPostgres", Products.postgresNIO, Products.logging],
            swiftSettings: upcomingFeatures
        ),
        // Calling out of the gateway under its rules (address policy, pooled
        // clients, timeouts, circuit breakers, webhook signatures, the SMTP client): a toolkit
        // the plugins that call out use.
        .target(
            name: "GatewayOutbound",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                Products.crypto, Products.nioCore, .product(name: "NIOHTTP1", package: "swift-nio"), Products.nioPosix,
                // The SMTP client's STARTTLS and implicit TLS.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                Products.logging, Products.tracing,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The code engine every channel shares (codes, their HMACs and single use, the outbox and its
        // worker): what the phone-code and email-code plugins are built on.
        .target(
            name: "GatewayCourier",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", "GatewayPluginPostgres", "GatewayPostgres", "GatewayOutbound",
                Products.postgresNIO, Products.crypto, Products.logging, Products.nioCore, Products.coreMetrics,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The runtime behind the seam: the tenant cache, the rate limiter and the
        // per-address throttle, the registries of installed plugins and profiles.
        .target(
            name: "GatewayRuntime",
            dependencies: ["GatewayCore", "GatewayPluginKit", Products.logging, Products.tracing],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "GatewayHTTP",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", "GatewayRuntime", Products.hummingbird, Products.httpTypes,
                Products.logging, Products.nioCore, .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"), Products.nioPosix,
                Products.coreMetrics, Products.tracing,
            ],
            swiftSettings: upcomingFeatures
        ),
        // What a console page is built with, the console's and a plugin's alike: the visit and its
        // admin API calls, forms, templates, an app's header and tabs.
        .target(
            name: "GatewayConsoleKit",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", .product(name: "Mustache", package: "swift-mustache"),
                Products.hummingbird, Products.httpTypes, Products.logging, Products.nioCore,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The operator console: server-rendered pages over the admin API, called in-process.
        .target(
            name: "GatewayConsole",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", "GatewayRuntime", "GatewayHTTP", "GatewayConsoleKit",
                .product(name: "Mustache", package: "swift-mustache"), Products.crypto, Products.hummingbird,
                Products.httpTypes, Products.logging, Products.nioCore,
            ],
            exclude: ["Assets"],
            swiftSettings: upcomingFeatures,
            plugins: ["EmbedConsoleAssets"]
        ),
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .target(
            name: "Argon2",
            dependencies: ["CSodium"],
            swiftSettings: upcomingFeatures
        ),
        // RS256 on the hot path: the system's OpenSSL 3 libcrypto signs about
        // twice as fast as BoringSSL where AVX-512 IFMA is available.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "OpenSSLSigner",
            dependencies: ["COpenSSL", "GatewayCore"],
            swiftSettings: upcomingFeatures
        ),
        // The plugins and token profiles this gateway offers, for the server and the tests that walk every route.
        .target(
            name: "InstalledPlugins",
            dependencies: ["GatewayPluginKit"] + credentialPlugins.map { .target(name: "\($0.name)Plugin") }
                + tokenProfiles.map { .target(name: "\($0.name)Profile") },
            swiftSettings: upcomingFeatures
        ),
        // The application: settings by area, and the server built from them (buildApplication).
        .target(
            name: "GatewayApplication",
            dependencies: [
                "GatewayCore", "GatewayPostgres", "GatewayPluginKit", "GatewayPluginPostgres", "GatewayRuntime", "GatewayHTTP", "GatewayConsole",
                "OpenSSLSigner", .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Configuration", package: "swift-configuration"), Products.hummingbird,
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"), Products.nioCore,
                Products.nioPosix, Products.coreMetrics, .product(name: "Prometheus", package: "swift-prometheus"),
                "InstalledPlugins", Products.tracing, .product(name: "OTel", package: "swift-otel"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The command line: one file a command, and the embedded PostgreSQL of `dev` and the tests.
        .executableTarget(
            name: "identity-gateway",
            dependencies: [
                "GatewayApplication", "GatewayCore", "GatewayPostgres", "GatewayPluginKit", "GatewayRuntime", "GatewayHTTP", "Argon2",
                .product(name: "ArgumentParser", package: "swift-argument-parser"), Products.logging,
                Products.nioPosix, Products.postgresNIO,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),

        // The fuzz targets: one a parser of outside bytes, each with its invariants. Built here, so a change
        // that breaks one fails the build; their committed inputs are replayed by FuzzReplayTests; libFuzzer
        // runs them from Fuzz/ (scripts/fuzz).
        .target(
            name: "GatewayFuzzTargets",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", "GatewayRuntime", "GatewayHTTP", "Argon2", "CSodium", "PasswordPlugin",
                "PhoneCodePlugin", "StaticUsersPlugin", "WebhookPlugin", "IDTokenPlugin", "PasskeyPlugin", Products.crypto,
                Products.logging,
            ],
            path: "Fuzz/Targets",
            swiftSettings: upcomingFeatures
        ),

        // The token path's steps, each prepared once and run many times by Benchmarks/micro;
        // The floor under the token path for the load benchmark's `floor` scenario (issue 61); built by
        // every `swift build`, so it cannot rot unseen.
        .executableTarget(
            name: "token-floor",
            dependencies: ["GatewayCore", "GatewayHTTP", "OpenSSLSigner", Products.hummingbird],
            path: "Benchmarks/Floor",
            swiftSettings: upcomingFeatures
        ),
        // BenchmarkWorkloadTests runs each once (and checks the load script's helpers: its profile split, its context
        // switches, its signing rates).
        .target(
            name: "GatewayBenchmarkWorkloads",
            dependencies: [
                "GatewayCore", "GatewayHTTP", "GatewayPluginKit", "GatewayRuntime", "GatewayTestSupport", "OpenSSLSigner",
                "Argon2", Products.logging,
            ],
            path: "Benchmarks/Workloads",
            swiftSettings: upcomingFeatures
        ),

        // Build tooling: turns a target's Migrations/*.sql into Swift source,
        // so the binary carries its schema and never looks for the source tree.
        .executableTarget(
            name: "file-embedder",
            path: "BuildTools/FileEmbedder",
            swiftSettings: upcomingFeatures
        ),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["file-embedder"],
            path: "BuildTools/EmbedMigrations"
        ),
        // The same for the console's templates and stylesheet.
        .plugin(
            name: "EmbedConsoleAssets",
            capability: .buildTool(),
            dependencies: ["file-embedder"],
            path: "BuildTools/EmbedConsoleAssets"
        ),

        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "GatewayCore", "GatewayPostgres", Products.postgresNIO, Products.logging, Products.hummingbirdTesting,
                Products.httpTypes, Products.nioCore,
            ],
            path: "Tests/GatewayTestSupport",
            swiftSettings: upcomingFeatures
        ),
        // A gateway router over a test database: what the gateway's and each plugin's integration tests drive.
        .target(
            name: "GatewayHTTPTestSupport",
            dependencies: [
                "GatewayConsole", "GatewayCore", "GatewayHTTP", "GatewayPluginKit", "GatewayPluginPostgres", "GatewayRuntime",
                "GatewayPostgres", "GatewayTestSupport", "InstalledPlugins", "OpenSSLSigner", "StaticUsersPlugin", Products.hummingbird,
                Products.hummingbirdTesting, Products.httpTypes, Products.logging, Products.nioCore,
                Products.postgresNIO, .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/GatewayHTTPTestSupport",
            swiftSettings: upcomingFeatures
        ),
        // A passkey provider in software, the client of the passkey plugin's tests and the client library's.
        .target(
            name: "PasskeyTestSupport",
            dependencies: ["GatewayCore", "PasskeyPlugin", Products.crypto],
            path: "Tests/PasskeyTestSupport",
            swiftSettings: upcomingFeatures
        ),
        // The reference argon2 implementation, as an independent oracle for the
        // Argon2 wrapper's tests only: nothing shipped links it.
        .systemLibrary(
            name: "CArgon2Oracle",
            path: "Tests/CArgon2Oracle",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        .testTarget(
            name: "Argon2Tests",
            dependencies: ["Argon2", "CArgon2Oracle"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "OpenSSLSignerTests",
            dependencies: [
                "OpenSSLSigner", "GatewayCore", "GatewayTestSupport", Products.cryptoExtras,
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: ["GatewayCore", "GatewayTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GatewayPluginKitTests",
            dependencies: ["GatewayCore", "GatewayPluginKit"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GatewayOutboundTests",
            dependencies: [
                "GatewayCore", "GatewayOutbound", "GatewayHTTPTestSupport", Products.logging, Products.nioCore,
                Products.nioPosix,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The courier's logic without I/O: the outbox's bell and its pauses, send protection's settings and verdicts.
        .testTarget(
            name: "GatewayCourierTests",
            dependencies: ["GatewayCourier", "GatewayCore", "GatewayPluginKit"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GatewayRuntimeTests",
            dependencies: ["GatewayCore", "GatewayPluginKit", "GatewayRuntime", "GatewayTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        // The token profiles' settings, secrets and checks, without a database; the vendors' libraries judge
        // their tokens in CommandLineIntegrationTests (TokenProfileVendorTests).
        .testTarget(
            name: "TokenProfileTests",
            dependencies: ["GatewayCore", "GatewayPluginKit", "GatewayRuntime"] + tokenProfiles.map { .target(name: "\($0.name)Profile") },
            swiftSettings: upcomingFeatures
        ),
        // The stores' pieces that need no database: the group commit's queue, the audit backlog, the SQL splitter.
        .testTarget(
            name: "GatewayPostgresTests",
            dependencies: ["GatewayCore", "GatewayPostgres", "GatewayTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GatewayPostgresIntegrationTests",
            dependencies: ["GatewayPostgres", "GatewayTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        // The HTTP layer over in-memory stores: no database needed.
        .testTarget(
            name: "GatewayHTTPUnitTests",
            dependencies: [
                "GatewayHTTP", "GatewayHTTPTestSupport", "GatewayRuntime", "OpenSSLSigner", "StaticUsersPlugin",
                "GatewayTestSupport", .product(name: "Yams", package: "Yams"),
                Products.hummingbirdTesting, Products.crypto, Products.httpTypes, Products.postgresNIO, Products.logging,
                Products.nioCore, .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GatewayHTTPIntegrationTests",
            dependencies: [
                "GatewayCore", "GatewayPluginKit", "GatewayPostgres", "GatewayHTTP", "GatewayHTTPTestSupport", "GatewayRuntime",
                "GatewayTestSupport", Products.hummingbird, Products.hummingbirdTesting, Products.httpTypes,
                Products.logging, Products.nioCore, Products.postgresNIO, .product(name: "Yams", package: "Yams"),
                Products.cryptoExtras,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The console's pages and forms over memory, driven as a browser would (forms, cookies) without one;
        // the real-browser suite is Tests/Browser, run by ./scripts/test.
        .testTarget(
            name: "GatewayConsoleTests",
            dependencies: [
                "GatewayConsole", "GatewayConsoleKit", "GatewayCore", "GatewayCourier", "GatewayHTTP", "GatewayHTTPTestSupport",
                "GatewayTestSupport", "GatewayPluginKit", "GatewayRuntime", Products.crypto, Products.hummingbird,
                Products.hummingbirdTesting, Products.httpTypes, Products.nioCore,
            ],
            swiftSettings: upcomingFeatures
        ),
        // The console's pages that read PostgreSQL's tables (the trail, its own sessions).
        .testTarget(
            name: "GatewayConsoleIntegrationTests",
            dependencies: [
                "GatewayConsole", "GatewayConsoleKit", "GatewayCore", "GatewayCourier", "GatewayHTTP", "GatewayHTTPTestSupport",
                "GatewayTestSupport", "GatewayPluginKit", "GatewayRuntime", Products.hummingbird, Products.hummingbirdTesting,
                Products.httpTypes, Products.nioCore, Products.postgresNIO,
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "BenchmarkWorkloadTests",
            dependencies: ["GatewayBenchmarkWorkloads", "GatewayTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        // The rules the repository keeps, read from its files: test targets are what they say, no raw statement,
        // migrations that expand before they contract.
        .testTarget(
            name: "HouseRuleTests",
            dependencies: ["GatewayCore", "GatewayPostgres", "GatewayTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        // Every committed fuzz input (Fuzz/Corpus), run through its target's invariants.
        .testTarget(
            name: "FuzzReplayTests",
            dependencies: ["GatewayFuzzTargets"],
            swiftSettings: upcomingFeatures
        ),
        // The settings as `serve` reads them, without a database.
        .testTarget(
            name: "GatewayApplicationTests",
            dependencies: ["GatewayApplication", "GatewayCore"],
            swiftSettings: upcomingFeatures
        ),
        // The client library's command-line example: sign in, then answer three challenges.
        .executableTarget(
            name: "gateway-client-example",
            dependencies: [Products.gatewayClient],
            path: "Examples/gateway-client-example",
            swiftSettings: upcomingFeatures
        ),
        // The client library's parts that need no gateway: its stores and how it reads answers.
        .testTarget(
            name: "IdentityGatewayClientTests",
            dependencies: [Products.gatewayClient],
            swiftSettings: upcomingFeatures
        ),
        // The client library against the gateway binary over PostgreSQL, through a network with faults on demand.
        .testTarget(
            name: "IdentityGatewayClientIntegrationTests",
            dependencies: [Products.gatewayClient, "GatewayCore", "GatewayTestSupport", "PasskeyTestSupport", Products.postgresNIO],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "CommandLineIntegrationTests",
            dependencies: [
                "GatewayCore", "GatewayPostgres", "GatewayHTTPTestSupport", "GatewayPluginKit", "GatewayRuntime", "GatewayTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"), Products.nioCore,
                .product(name: "NIOHTTP1", package: "swift-nio"), Products.nioPosix,
                .product(name: "NIOSSL", package: "swift-nio-ssl"), Products.postgresNIO,
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
