import GatewayConsole
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayPostgres
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import OpenSSLSigner
import PostgresNIO
import Prometheus
import ServiceLifecycle
import UnixSignals

/// Wires Postgres, the tenant directory and the HTTP server into one service
/// group that stops cleanly on SIGTERM or SIGINT.
struct GatewayServer {
    let configuration: GatewayConfiguration
    let logger: Logger

    /// Runs until a shutdown signal. `prepare` runs once the database is
    /// reachable and the schema is current, before the first request.
    func run(prepare: @escaping @Sendable (PostgresClient) async throws -> Void = { _ in }) async throws {
        // First: metric handles made before it would report to nothing.
        let metrics = GatewayMetrics.bootstrap()
        let masterKey = try configuration.requiredMasterKey()
        let databaseURL = try DatabaseURL(
            configuration.databaseURL, maximumConnections: configuration.databaseMaxConnections,
            keepAliveSeconds: configuration.databaseKeepAliveSeconds, applicationName: DatabaseConnectionGauge.applicationName)
        let client = PostgresClient(configuration: databaseURL.configuration, backgroundLogger: logger)
        if configuration.mode == .production && !databaseURL.isConfidential {
            logger.warning(
                "database.url does not require TLS: passwords, keys and the audit trail may cross the network in clear; add sslmode=require",
                metadata: ["database": "\(databaseURL)"])
        }
        let plugins = configuration.plugins
        let databaseTimeout = Duration.milliseconds(configuration.databaseRequestTimeoutMilliseconds)
        let ledger = PostgresRequestLedger(
            client: client, logger: logger, timeout: databaseTimeout, writesAudit: configuration.auditEnabled)
        let stores = GatewayStores.postgres(client: client, ledger: ledger, logger: logger)
        let pluginServices = PluginServices(client: client, apps: stores.apps, logger: logger, databaseTimeout: databaseTimeout)
        let tenants = TenantCache(
            store: stores.tenants, makeSigner: { try OpenSSLRS256Signer($0) }, plugins: plugins,
            pluginServices: pluginServices, masterKey: masterKey, logger: logger)
        if !configuration.auditEnabled {
            logger.critical("GATEWAY_AUDIT_ENABLED=false: tokens are issued WITHOUT audit rows (benchmarking only)")
        }
        let maintenance = AuditMaintenance(
            client: client, logger: logger,
            retentionDays: configuration.auditRetentionDays == 0 ? nil : configuration.auditRetentionDays)
        let readiness = Readiness()
        let connections = DatabaseConnectionGauge(
            client: client, maximumConnections: configuration.databaseMaxConnections, logger: logger)
        let exposition: @Sendable () async -> [UInt8] = {
            await connections.refresh()
            return metrics.emitToBuffer()
        }
        let metricsOnMainPort = configuration.metricsPort == nil ? exposition : nil
        let traceExport = try TraceExport.start(
            configuration.tracing, trustedProxies: configuration.rateLimits.trustedProxies, logger: logger)
        let router = GatewayRouter.make(
            GatewayDependencies(
                stores: stores, tenants: tenants, plugins: plugins, pluginServices: pluginServices, masterKey: masterKey,
                rateLimits: configuration.rateLimits,
                databaseTimeout: databaseTimeout, readiness: readiness, logsRequests: configuration.logRequests,
                metricsExposition: metricsOnMainPort,
                frontEnds: configuration.console.enabled
                    ? [
                        try Console(
                            settings: configuration.console, sessions: stores.consoleSessions, masterKey: masterKey,
                            credentialTypes: plugins.credentialTypes)
                    ] : [],
                servesTLS: configuration.tls != nil, serverSpans: traceExport?.serverSpans, logger: logger))
        let changeListener = AppChangeListener(
            client: client, logger: logger, reloadInterval: .seconds(configuration.cacheReloadSeconds),
            onConnection: { readiness.setListening($0) }
        ) { payload in
            tenants.invalidate(notification: payload)
        }

        let http1 = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [
                    HTTP1HandlersInstaller(
                        bodyRate: configuration.httpMinimumBodyBytesPerSecond == 0
                            ? nil
                            : RequestBodyRateGuard.Rule(
                                bytesPerSecond: configuration.httpMinimumBodyBytesPerSecond,
                                grace: .seconds(Int64(configuration.httpMinimumBodyRateGraceSeconds))))
                ],
                idleTimeout: .seconds(Int64(configuration.httpIdleTimeoutSeconds))))
        var app = Application(
            router: router,
            server: try configuration.tls.map { try .tls(http1, tlsConfiguration: $0) } ?? http1,
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "identity-gateway"),
            logger: logger)
        let migrateOnStart = configuration.migrateOnStart
        let isProduction = configuration.mode == .production
        let tlsEnabled = configuration.tls != nil
        app.beforeServerStarts {
            let runner = MigrationRunner(client: client, logger: logger)
            if migrateOnStart {
                try await runner.run(Migration.core + plugins.migrations)
            } else {
                let pending = try await runner.pending(Migration.core + plugins.migrations)
                guard pending.isEmpty else {
                    throw ConfigurationProblems([
                        "the database schema is behind by \(pending.count) migration(s); run `identity-gateway migrate` "
                            + "or set GATEWAY_MIGRATE_ON_START=true"
                    ])
                }
            }
            try await Self.checkTokenProfiles(plugins.profiles, isProduction: isProduction, client: client, logger: logger)
            try await DurabilityCheck.warnIfUndurable(client: client, logger: logger)
            try await maintenance.runOnce()
            if let secret = configuration.bootstrapAdminToken {
                try await BootstrapToken.seed(secret, client: client, logger: logger)
            }
            try await prepare(client)
            readiness.markStarted()
            logger.info(
                "database ready; starting the HTTP server",
                metadata: ["database": "\(databaseURL)", "tls": "\(tlsEnabled ? "on" : "off")"])
        }
        var metricsServer: [any Service] = []
        if let metricsPort = configuration.metricsPort {
            let metricsRouter = Router(context: GatewayRequestContext.self)
            MetricsController(exposition: exposition).addRoutes(to: metricsRouter)
            metricsServer.append(
                Application(
                    router: metricsRouter, server: http1,
                    configuration: .init(
                        address: .hostname(configuration.httpHost, port: metricsPort), serverName: "identity-gateway-metrics"),
                    logger: logger))
        }
        // Shutdown runs backwards through this list: drain, stop HTTP (finishing
        // in-flight requests), flush counters and audit rows, send the last
        // spans, close the pool.
        let drain = DrainOnShutdown(readiness: readiness, drainTime: .seconds(configuration.shutdownDrainSeconds))
        let services: [any Service] =
            [client] + (traceExport.map { [$0.service] } ?? []) + [changeListener, maintenance, ledger] + metricsServer
            + [app, drain]
        var group = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(configuration.shutdownGraceSeconds)
        try await ServiceGroup(configuration: group).run()
    }
}

/// Runs `body` with a connected client and closes it afterwards.
func withPostgresClient<Result: Sendable>(
    _ url: String, logger: Logger, _ body: @escaping @Sendable (PostgresClient) async throws -> Result
) async throws -> Result {
    let client = PostgresClient(configuration: try DatabaseURL(url).configuration, backgroundLogger: logger)
    return try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask {
            await client.run()
            return nil
        }
        group.addTask { try await body(client) }
        defer { group.cancelAll() }
        while let result = try await group.next() {
            if let result { return result }
        }
        throw CancellationError()
    }
}
