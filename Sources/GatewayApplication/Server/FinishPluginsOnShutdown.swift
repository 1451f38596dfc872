import GatewayRuntime
import ServiceLifecycle

/// Waits for the shutdown, then lets every plugin write what it holds in
/// memory (``PluginRegistry/finishAll()``). Listed after the ledger and
/// before the HTTP server, so it runs once the last request is answered and
/// while the database connections are still open.
struct FinishPluginsOnShutdown: Service {
    let plugins: PluginRegistry

    func run() async throws {
        try? await gracefulShutdown()
        await plugins.finishAll()
    }
}
