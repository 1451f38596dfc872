import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import ServiceLifecycle

/// The first service to hear of a shutdown (it is last in the group): turns
/// `/readyz` to 503 and waits `drainTime` so load balancers stop sending
/// new requests before the HTTP server stops accepting and finishes the
/// requests it has.
struct DrainOnShutdown: Service {
    let readiness: Readiness
    let drainTime: Duration

    func run() async throws {
        try? await gracefulShutdown()
        readiness.markDraining()
        try? await Task.sleep(for: drainTime)
    }
}

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
