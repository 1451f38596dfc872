public import GatewayCore
public import GatewayPluginKit
public import GatewayRuntime
public import Logging

/// What the gateway's routes need (``GatewayRouter``), put together in this
/// one place from the stores: what the plugins are lent and the tenant cache.
///
/// The server (`buildApplication`), the tests over PostgreSQL
/// (`TestGateway`) and the tests over memory (`MemoryGateway`) all build
/// the gateway through ``init(stores:pluginStorage:plugins:masterKey:makeSigner:options:logger:)``;
/// they differ only in the stores and plugin storage they hand it and in
/// ``Options``, so what the tests drive is what runs.
public struct GatewayDependencies: Sendable {
    public let stores: GatewayStores
    public let tenants: TenantCache
    public let plugins: PluginRegistry
    /// What the plugins' verifiers and routes are given.
    public let pluginServices: PluginServices
    public let masterKey: MasterKey
    public let options: Options
    /// The deployment's limits with the plugins' policies added.
    public let rateLimits: RateLimitSettings
    /// How a user's change reaches everything that holds something of theirs.
    public let userLifecycle: UserLifecycle
    public let logger: Logger

    /// What differs between the server and a test gateway, besides the stores.
    public struct Options: Sendable {
        /// The deployment's limits; the plugins' policies are added to them.
        public var rateLimits: RateLimitSettings
        /// How a request's database step waits (``DatabaseRetry``); its
        /// attempt timeout is also how long a token request waits for the
        /// database before answering 503.
        public var databaseRetry: DatabaseRetry
        /// The threads tokens are signed on: the server makes its own, tests
        /// share ``SigningThreads/sharedByTests``.
        public var signers: SigningThreads
        /// What `/readyz` reports besides storage.
        public var readiness: Readiness
        /// Whether every request gets an access-log line.
        public var logsRequests: Bool
        /// Renders `/metrics` (Prometheus text); empty where no metrics backend
        /// runs, `nil` when metrics are served on a port of their own.
        public var metricsExposition: (@Sendable () async -> [UInt8])?
        /// Pages over the admin API (the console), when served.
        public var frontEnds: [any AdminAPIFrontEnd]
        /// The gateway serves TLS itself: every answer carries `Strict-Transport-Security`.
        public var servesTLS: Bool
        /// The server span of every request, when traces are exported; `nil` makes no span at all.
        public var serverSpans: ServerSpanMiddleware?

        public init(
            rateLimits: RateLimitSettings, databaseRetry: DatabaseRetry, signers: SigningThreads,
            readiness: Readiness = Readiness(), logsRequests: Bool = true,
            metricsExposition: (@Sendable () async -> [UInt8])? = { [] }, frontEnds: [any AdminAPIFrontEnd] = [],
            servesTLS: Bool = false, serverSpans: ServerSpanMiddleware? = nil
        ) {
            self.rateLimits = rateLimits
            self.databaseRetry = databaseRetry
            self.signers = signers
            self.readiness = readiness
            self.logsRequests = logsRequests
            self.metricsExposition = metricsExposition
            self.frontEnds = frontEnds
            self.servesTLS = servesTLS
            self.serverSpans = serverSpans
        }
    }

    /// - Parameters:
    ///   - pluginStorage: where the plugins' own tables are.
    ///   - makeSigner: the signer for an app's active key, built once per
    ///     load (the executable and the tests pass OpenSSL's).
    public init(
        stores: GatewayStores, pluginStorage: PluginStorage, plugins: PluginRegistry, masterKey: MasterKey,
        makeSigner: @escaping @Sendable (RSAKeyPair) throws -> any RS256Signer, options: Options, logger: Logger
    ) {
        let pluginServices = PluginServices(
            storage: pluginStorage, apps: stores.apps, sessions: stores.sessions, userChanges: stores.userChanges,
            logger: logger,
            databaseRetry: options.databaseRetry)
        self.pluginServices = pluginServices
        self.tenants = TenantCache(
            store: stores.tenants, makeSigner: makeSigner, plugins: plugins, pluginServices: pluginServices,
            masterKey: masterKey, logger: logger)
        self.stores = stores
        self.plugins = plugins
        self.masterKey = masterKey
        self.options = options
        self.rateLimits = options.rateLimits.adding(plugins.rateLimitPolicies)
        self.userLifecycle = UserLifecycle(
            secondFactor: SecondFactors(store: stores.secondFactors, masterKey: masterKey).hearer, plugins: plugins.all,
            services: pluginServices, sessions: SessionEnding(apps: stores.apps, sessions: stores.sessions).hearer)
        self.logger = logger
    }

    /// How long a token request waits for the database before answering 503.
    public var databaseTimeout: Duration { options.databaseRetry.attemptTimeout }
}
