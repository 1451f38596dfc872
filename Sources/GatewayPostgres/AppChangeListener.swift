public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// Listens on ``AppChangeNotification/channel`` and passes each payload to
/// `onChange`, so every replica drops a changed app from its cache within
/// moments of the commit. As a safety net for a lost connection, it says
/// "everything" on every (re)connect; for a missed notification, it calls
/// `onRecheck` every `reloadInterval` (the cache then drops the apps whose
/// version changed). Each (re)connect is logged at info as
/// ``listeningLine``: from then on the replica hears every change.
public struct AppChangeListener: Service {
    public static let listeningLine = "listening for app changes"

    private let client: PostgresClient
    private let logger: Logger
    private let reloadInterval: Duration
    private let onChange: @Sendable (String) -> Void
    private let onConnection: @Sendable (Bool) -> Void
    private let onRecheck: @Sendable () async -> Void

    /// - Parameter onConnection: told `true` when the listener is listening,
    ///   `false` when it lost its connection (readiness follows it).
    public init(
        client: PostgresClient, logger: Logger, reloadInterval: Duration = .seconds(60),
        onConnection: @escaping @Sendable (Bool) -> Void = { _ in },
        onRecheck: @escaping @Sendable () async -> Void,
        onChange: @escaping @Sendable (String) -> Void
    ) {
        self.onRecheck = onRecheck
        self.client = client
        self.logger = logger
        self.reloadInterval = reloadInterval
        self.onConnection = onConnection
        self.onChange = onChange
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await listen() }
                group.addTask { await reloadPeriodically() }
            }
        }
    }

    private func listen() async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: AppChangeNotification.channel) { notifications in
                        onConnection(true)
                        logger.info("\(Self.listeningLine)")
                        onChange(AppChangeNotification.everything)
                        for try await notification in notifications {
                            onChange(notification.payload)
                        }
                    }
                }
            } catch {
                onConnection(false)
                guard !Task.isCancelled else { return }
                logger.warning("app change listener lost its connection; reconnecting", metadata: ["error": "\(error)"])
                // Back off before reconnecting so a database outage is not hammered.
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func reloadPeriodically() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: reloadInterval)
            } catch {
                return
            }
            await onRecheck()
        }
    }
}
