import GatewayHTTP
import GatewayPluginKit
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
