import GatewayCore
public import Hummingbird
import NIOCore
public import GatewayPostgres
public import PostgresNIO

/// `GET /healthz`: the process answers. `GET /readyz`: this replica should
/// get traffic (see ``Readiness``), the database answers within a second,
/// and no audit row has waited in memory longer than `staleBacklogAfter`
/// (PostgreSQL answers but does not take the rows: an operator must look);
/// 503 with the reason otherwise. Neither is rate limited or audited.
public struct HealthController: Sendable {
    public static let paths = ["/healthz", "/readyz"]
    public static let databaseTimeout = Duration.seconds(1)

    private let readiness: Readiness
    private let client: PostgresClient
    private let writer: GroupCommitWriter
    private let staleBacklogAfter: Duration

    public init(
        readiness: Readiness, client: PostgresClient, writer: GroupCommitWriter, staleBacklogAfter: Duration = .seconds(30)
    ) {
        self.readiness = readiness
        self.client = client
        self.writer = writer
        self.staleBacklogAfter = staleBacklogAfter
    }

    public func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/healthz") { _, _ in Self.answer(.ok, #"{"status":"ok"}"#) }
        router.get("/readyz") { _, context in await ready(context) }
    }

    private func ready(_ context: GatewayRequestContext) async -> Response {
        if let problem = readiness.problem { return Self.unavailable(problem) }
        if let age = writer.oldestKeptRowAge, age > staleBacklogAfter {
            return Self.unavailable(
                "audit rows kept in memory have waited \(age.components.seconds) s to be written (\(writer.keptCount) rows)")
        }
        let client = self.client
        do {
            _ = try await withTimeout(Self.databaseTimeout) {
                try await client.query("SELECT 1", logger: context.logger)
            }
        } catch {
            return Self.unavailable("the database does not answer")
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
