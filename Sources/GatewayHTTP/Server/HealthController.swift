public import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import NIOCore

/// `GET /healthz`: the process answers. `GET /readyz`: this replica should
/// get traffic (see ``Readiness``), the database answers within half a
/// second (or has failed for less than the readiness's grace: a failover
/// requests wait out), and no audit row has waited in memory longer than
/// `staleBacklogAfter` (PostgreSQL answers but does not take the rows: an
/// operator must look); 503 with the reason otherwise. Neither is rate
/// limited or audited.
public struct HealthController: Sendable {
    public static let paths = ["/healthz", "/readyz"]
    /// Under a load balancer's check timeout (HAProxy's one second in the drill).
    public static let databaseTimeout = Duration.milliseconds(500)

    private let readiness: Readiness
    private let storage: any StorageHealth
    private let staleBacklogAfter: Duration

    public init(readiness: Readiness, storage: any StorageHealth, staleBacklogAfter: Duration = .seconds(30)) {
        self.readiness = readiness
        self.storage = storage
        self.staleBacklogAfter = staleBacklogAfter
    }

    public func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/healthz") { _, _ in Self.answer(.ok, #"{"status":"ok"}"#) }
        router.get("/readyz") { _, _ in await ready() }
    }

    private func ready() async -> Response {
        if let problem = readiness.problem { return Self.unavailable(problem) }
        if let kept = storage.keptAuditRows, kept.oldestAge > staleBacklogAfter {
            return Self.unavailable(
                "audit rows kept in memory have waited \(kept.oldestAge.components.seconds) s to be written (\(kept.count) rows)")
        }
        let storage = self.storage
        do {
            try await withTimeout(Self.databaseTimeout) { try await storage.ping() }
            _ = readiness.noteDatabase(answered: true)
        } catch {
            guard readiness.noteDatabase(answered: false) else { return Self.unavailable("the database does not answer") }
            return Self.answer(.ok, #"{"status":"ready","database":"not answering for now; requests wait for it"}"#)
        }
        return Self.answer(.ok, #"{"status":"ready"}"#)
    }

    private static func unavailable(_ reason: String) -> Response {
        answer(.serviceUnavailable, #"{"status":"unavailable","reason":"\#(reason)"}"#)
    }

    private static func answer(_ status: HTTPResponse.Status, _ json: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}
