import GatewayConsole
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import GatewayPluginPostgres
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import OpenSSLSigner
public import PostgresNIO
import Prometheus
public import ServiceLifecycle
import UnixSignals

/// Builds the gateway from its settings, as Hummingbird's template does:
/// PostgreSQL, the tenant directory, the HTTP server (and the metrics one),
/// and the background work, as one service group that stops cleanly on
/// SIGTERM or SIGINT. `prepare` runs once the database is reachable and the
/// schema is current, before the first request. The application makes its
/// own signing threads (``SigningThreads``), which run until the process ends.
public func buildApplication(
    _ configuration: GatewayConfiguration, logger: Logger,
    prepare: @escaping @Sendable (PostgresClient) async throws -> Void = { _ in }
) throws -> ServiceGroup {
    // First: metric handles made before it would report to nothing.
    let metrics = GatewayMetrics.bootstrap()
    let masterKey = try configuration.requiredMasterKey()
    let databaseURL = try DatabaseURL(
        configuration.database.url, maximumConnections: configuration.database.maximumConnections,
        keepAliveSeconds: configuration.database.keepAliveSeconds, applicationName: DatabaseConnectionGauge.applicationName)
    let client = PostgresClient(configuration: databaseURL.configuration, backgroundLogger: logger)
    if configuration.mode == .production && !databaseURL.isConfidential {
        logger.warning(
            "database.url does not require TLS: passwords, keys and the audit trail may cross the network in clear; add sslmode=require",
            metadata: ["database": "\(databaseURL)"])
    }
    let plugins = configuration.plugins
    let databaseTimeout = Duration.milliseconds(configuration.database.requestTimeoutMilliseconds)
    // A request waits out a failover within this window; each attempt within the timeout.
    let retryWindow = Duration.milliseconds(configuration.database.retryWindowMilliseconds)
    let databaseRetry = DatabaseRetry(
        attemptTimeout: databaseTimeout, window: retryWindow, isTransient: TransientFailure.isTransient)
    let ledger = PostgresRequestLedger(
        client: client, logger: logger, timeout: databaseTimeout, retryWindow: retryWindow,
        commitInterval: .milliseconds(configuration.database.commitIntervalMilliseconds), writesAudit: configuration.audit.enabled)
    let stores = GatewayStores.postgres(client: client, ledger: ledger, logger: logger, databaseRetry: databaseRetry)
    if !configuration.audit.enabled {
        logger.critical("GATEWAY_AUDIT_ENABLED=false: tokens are issued WITHOUT audit rows (benchmarking only)")
    }
    let maintenance = AuditMaintenance(
        client: client, logger: logger,
        retentionDays: configuration.auditRetentionDays)
    // A database failing over keeps the replica in rotation as long as requests wait for it.
    let readiness = Readiness(outageGrace: retryWindow)
    let connections = DatabaseConnectionGauge(
        client: client, maximumConnections: configuration.database.maximumConnections, logger: logger)
    let exposition: @Sendable () async -> [UInt8] = {
        await connections.refresh()
        return metrics.emitToBuffer()
    }
    let metricsOnMainPort = configuration.http.metricsPort == nil ? exposition : nil
    let traceExport = try TraceExport.start(
        configuration.tracing, trustedProxies: configuration.rateLimits.trustedProxies, logger: logger)
    let dependencies = GatewayDependencies(
        stores: stores, pluginStorage: .postgres(client), plugins: plugins, masterKey: masterKey,
        makeSigner: { try OpenSSLRS256Signer($0) },
        options: .init(
            rateLimits: configuration.rateLimits, databaseRetry: databaseRetry, signers: SigningThreads(),
            readiness: readiness, logsRequests: configuration.log.requests, metricsExposition: metricsOnMainPort,
            frontEnds: configuration.console.enabled
                ? [
                    try Console(
                        settings: configuration.console, sessions: stores.consoleSessions, masterKey: masterKey,
                        plugins: plugins)
                ] : [],
            servesTLS: configuration.http.tls != nil, serverSpans: traceExport?.serverSpans),
        logger: logger)
    let tenants = dependencies.tenants
    let router = GatewayRouter.make(dependencies)
    let changeListener = AppChangeListener(
        client: client, logger: logger, reloadInterval: .seconds(configuration.cacheReloadSeconds),
        onConnection: { readiness.setListening($0) }, onRecheck: { await tenants.recheck() }
    ) { payload in
        tenants.invalidate(notification: payload)
    }

    let http1 = configuration.http.serverBuilder
    var app = Application(
        router: router,
        server: try configuration.http.tls.map { try .tls(http1, tlsConfiguration: $0) } ?? http1,
        configuration: .init(
            address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "identity-gateway"),
        logger: logger)
    let startup = StartupSteps(
        client: client, plugins: plugins, migrateOnStart: configuration.database.migrateOnStart,
        migrationLockTimeout: .milliseconds(configuration.database.migrationLockTimeoutMilliseconds),
        isProduction: configuration.mode == .production, bootstrapAdminToken: configuration.secrets.bootstrapAdminToken,
        logger: logger)
    let tlsEnabled = configuration.http.tls != nil
    app.beforeServerStarts {
        try await startup.run()
        try await maintenance.runOnce()
        try await prepare(client)
        readiness.markStarted()
        logger.info(
            "database ready; starting the HTTP server",
            metadata: ["database": "\(databaseURL)", "tls": "\(tlsEnabled ? "on" : "off")"])
    }
    var metricsServer: [any Service] = []
    if let metricsPort = configuration.http.metricsPort {
        let metricsRouter = Router(context: GatewayRequestContext.self)
        MetricsController(exposition: exposition).addRoutes(to: metricsRouter)
        metricsServer.append(
            Application(
                router: metricsRouter, server: http1,
                configuration: .init(
                    address: .hostname(configuration.http.host, port: metricsPort), serverName: "identity-gateway-metrics"),
                logger: logger))
    }
    // Shutdown runs backwards through this list: drain, stop HTTP (finishing
    // in-flight requests), stop the plugins' background work, let plugins write what they hold, flush counters
    // and audit rows, send the last spans, close the pool.
    let drain = DrainOnShutdown(readiness: readiness, drainTime: .seconds(configuration.shutdown.drainSeconds))
    let services: [any Service] =
        [client] + (traceExport.map { [$0.service] } ?? [])
        + [
            changeListener, maintenance, ledger, FinishPluginsOnShutdown(plugins: plugins),
            PluginBackgroundWork(
                plugins: plugins, services: BackgroundServices(plugin: dependencies.pluginServices, tenants: tenants),
                userLifecycle: dependencies.userLifecycle),
        ] + metricsServer + [app, drain]
    var group = ServiceGroupConfiguration(
        services: services,
        gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    group.maximumGracefulShutdownDuration = .seconds(configuration.shutdown.graceSeconds)
    return ServiceGroup(configuration: group)
}

/// Runs `body` with a connected client and closes it afterwards.
public func withPostgresClient<Result: Sendable>(
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
