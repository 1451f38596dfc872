import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird
import NIOCore
import Synchronization

/// `GET /admin/v1/apps/{app_id}/audit_events` (the app's trail) and
/// `GET /admin/v1/audit_events` (operators, every app): newest first, with
/// filters and a cursor; `Accept: application/x-ndjson` streams the whole
/// matching range, one event a line, for a SIEM.
///
/// An export reads the trail a page at a time and holds a database
/// connection only while a page is read, never while the client reads: a
/// slow reader holds its socket and one page of memory, not the pool the
/// token path needs. At most ``maximumExports`` run at once on a replica;
/// another gets 503 `busy`.
struct AuditEventController: Sendable {
    static let exportPageSize = 500
    static let maximumExports = 4

    /// Exports running now on this replica.
    final class Exports: Sendable {
        let running = Atomic(0)
    }

    struct Event: Encodable {
        let id: String
        let occurred_at: String
        let app_id: String
        let event: String
        let outcome: String
        let reason: String?
        let user_id: String?
        let credential_type: String?
        let key_id: String?
        let client_ip: String?
        let user_agent: String?
        let request_id: String
        let actor: String?
        let detail: JSONValue

        init(_ row: StoredAuditEvent) {
            id = "\(row.position.id)"
            occurred_at = row.occurredAt.formatted(
                Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
            app_id = row.appID.lowercasedText
            event = row.event
            outcome = row.outcome
            reason = row.reason
            user_id = row.userID
            credential_type = row.credentialType
            key_id = row.keyID.map { KeyID(uuid: $0).description }
            client_ip = row.clientIP
            user_agent = row.userAgent
            request_id = row.requestID
            actor = row.actor?.lowercasedText
            detail = (try? JSONDecoder().decode(JSONValue.self, from: Data(row.detail.utf8))) ?? .object([:])
        }
    }

    let events: any AuditTrail
    let exports = Exports()

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("apps/{app_id}/audit_events") { request, context in
            let (appID, _) = try context.authorizedAppID()
            return try await list(request, appID: appID)
        }
        group.get("audit_events") { request, context in
            _ = try context.requireOperator()
            var appID: AppID?
            if let text = request.uri.queryParameters["app_id"] {
                guard let parsed = AppID(String(text)) else { throw GatewayError.invalidRequest("app_id must be an app id.") }
                appID = parsed
            }
            return try await list(request, appID: appID)
        }
    }

    private func list(_ request: Request, appID: AppID?) async throws -> Response {
        let filter = try Self.filter(request, appID: appID)
        if request.headers[.accept]?.contains("application/x-ndjson") == true {
            let events = self.events
            let exports = self.exports
            guard exports.running.wrappingAdd(1, ordering: .relaxed).newValue <= Self.maximumExports else {
                exports.running.wrappingSubtract(1, ordering: .relaxed)
                throw GatewayError.busy
            }
            let body = ResponseBody { writer in
                defer { exports.running.wrappingSubtract(1, ordering: .relaxed) }
                let encoder = AdminResponses.encoder()
                var position: StoredAuditEvent.Position?
                var pageSize = 0
                repeat {
                    // The connection goes back to the pool before the client gets a byte of the page.
                    let rows = try await events.page(filter, after: position, limit: Self.exportPageSize)
                    var lines = ByteBuffer()
                    for row in rows {
                        lines.writeBytes(try encoder.encode(Event(row)))
                        lines.writeString("\n")
                    }
                    if !rows.isEmpty { try await writer.write(lines) }
                    position = rows.last?.position
                    pageSize = rows.count
                } while pageSize == Self.exportPageSize
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
        }
        let limit = try Pagination.limit(request)
        let position = try request.uri.queryParameters["cursor"].map { cursor throws(GatewayError) in try Self.position(String(cursor)) }
        let rows = try await events.page(filter, after: position, limit: limit)
        let next = rows.count == limit ? rows.last.map { Self.cursor($0.position) } : nil
        return try AdminResponses.json(AdminResponses.Page(items: rows.map(Event.init), next_cursor: next))
    }

    private static func filter(_ request: Request, appID: AppID?) throws(GatewayError) -> AuditFilter {
        let query = request.uri.queryParameters
        var filter = AuditFilter()
        filter.appID = appID
        func time(_ name: String) throws(GatewayError) -> Date? {
            guard let text = query[name[...]] else { return nil }
            guard let date = try? Date(String(text), strategy: .iso8601) else {
                throw .invalidRequest("\(name) must be an RFC 3339 time, e.g. 2027-01-31T00:00:00Z.")
            }
            return date
        }
        filter.from = try time("from")
        filter.to = try time("to")
        filter.event = query["event"].map(String.init)
        filter.outcome = query["outcome"].map(String.init)
        if let outcome = filter.outcome, !["success", "failure"].contains(outcome) {
            throw .invalidRequest("outcome must be success or failure.")
        }
        filter.userID = query["user_id"].map(String.init)
        filter.requestID = query["request_id"].map(String.init)
        return filter
    }

    static func cursor(_ position: StoredAuditEvent.Position) -> String {
        Base64URL.encode(Data("\(position.micros):\(position.id)".utf8))
    }

    static func position(_ cursor: String) throws(GatewayError) -> StoredAuditEvent.Position {
        let parts = Base64URL.decode(cursor).map { String(decoding: $0, as: UTF8.self).split(separator: ":") } ?? []
        guard parts.count == 2, let micros = Int64(parts[0]), let id = Int64(parts[1]) else {
            throw .invalidRequest("cursor is not one this API gave out.")
        }
        return .init(micros: micros, id: id)
    }
}
