import GatewayPluginKit
import GatewayRuntime
import ServiceLifecycle

/// Runs the gateway's background work until the graceful shutdown: the
/// plugins' (``PluginRegistry/runInBackground(_:)``: the outbox's
/// deliveries) and the sweep of user changes their requests left
/// unfinished (``UserLifecycle/sweepUntilCancelled(every:)``). Listed before
/// the HTTP server, so it stops once the last request is answered, and
/// after the database client, which is still open while the last
/// deliveries finish.
struct PluginBackgroundWork: Service {
    let plugins: PluginRegistry
    let services: BackgroundServices
    let userLifecycle: UserLifecycle

    func run() async throws {
        await cancelWhenGracefulShutdown { [plugins, services, userLifecycle] in
            await withDiscardingTaskGroup { group in
                group.addTask { await plugins.runInBackground(services) }
                group.addTask { await userLifecycle.sweepUntilCancelled() }
            }
        }
    }
}
