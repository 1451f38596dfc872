public import GatewayPluginKit
public import Hummingbird
import NIOCore

/// `GET /metrics`: the process's metrics in Prometheus text format, as the
/// executable's metrics backend renders them. Not rate limited, not audited.
public struct MetricsController: Sendable {
    private let exposition: @Sendable () async -> [UInt8]

    public init(exposition: @escaping @Sendable () async -> [UInt8]) {
        self.exposition = exposition
    }

    public func addRoutes(to router: Router<GatewayRequestContext>) {
        let exposition = self.exposition
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: await exposition())))
        }
    }
}
