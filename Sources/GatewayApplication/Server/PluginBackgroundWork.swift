import GatewayPluginKit
import GatewayRuntime
import ServiceLifecycle

/// Runs the plugins' background work (``PluginRegistry/runInBackground(_:)``:
/// the outbox's deliveries) until the graceful shutdown. Listed before the
/// HTTP server, so it stops once the last request is answered, and after
/// the database client, which is still open while the last deliveries finish.
struct PluginBackgroundWork: Service {
    let plugins: PluginRegistry
    let services: BackgroundServices

    func run() async throws {
        await cancelWhenGracefulShutdown { [plugins, services] in await plugins.runInBackground(services) }
    }
}
