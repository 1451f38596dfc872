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
            detail = (try? JSONCoding.value(row.detail)) ?? .object([:])
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
            return try await list(request, appID: try Self.appIDQuery(request))
        }
        group.get("apps/{app_id}/audit_events:per_minute") { request, context in
            let (appID, _) = try context.authorizedAppID()
            return try await perMinute(request, appID: appID)
        }
        group.get("audit_events:per_minute") { request, context in
            _ = try context.requireOperator()
            return try await perMinute(request, appID: try Self.appIDQuery(request))
        }
    }

    /// The operator routes' `app_id`, which narrows them to one app.
    private static func appIDQuery(_ request: Request) throws(GatewayError) -> AppID? {
        guard let text = request.uri.queryParameters["app_id"] else { return nil }
        guard let appID = AppID(String(text)) else { throw .invalidRequest("app_id must be an app id.") }
        return appID
    }

    /// A time query parameter, RFC 3339.
    private static func time(_ name: String, in request: Request) throws(GatewayError) -> Date? {
        guard let text = request.uri.queryParameters[name[...]] else { return nil }
        guard let date = try? Date(String(text), strategy: .iso8601) else {
            throw .invalidRequest("\(name) must be an RFC 3339 time, e.g. 2027-01-31T00:00:00Z.")
        }
        return date
    }

    /// Token requests per minute, issued and denied by reason, over at most
    /// a day: the last hour unless `from` and `to` say otherwise. Every
    /// minute of the range is listed, those without requests as zeros.
    struct MinuteCounts: Encodable {
        struct Minute: Encodable {
            let minute: String
            var issued = 0
            var denied = 0
            var denied_by_reason: [String: Int] = [:]
        }
        let from: String
        let to: String
        let minutes: [Minute]
    }

    static let longestCountedRange: TimeInterval = 24 * 3600

    private func perMinute(_ request: Request, appID: AppID?) async throws -> Response {
        func minute(_ date: Date) -> Date { Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 60).rounded(.down) * 60) }
        let to = try Self.time("to", in: request).map(minute) ?? minute(Date()).addingTimeInterval(60)
        let from = try Self.time("from", in: request).map(minute) ?? to.addingTimeInterval(-3600)
        guard from < to, to.timeIntervalSince(from) <= Self.longestCountedRange else {
            throw GatewayError.invalidRequest("from must be before to, at most 24 hours apart (whole minutes).")
        }
        let counts = try await events.tokenCountsPerMinute(appID: appID, from: from, to: to)
        let format = Date.ISO8601FormatStyle(timeZone: .gmt)
        var minutes: [MinuteCounts.Minute] = []
        var index: [Int: Int] = [:]
        var minute = from
        while minute < to {
            index[Int(minute.timeIntervalSince1970)] = minutes.count
            minutes.append(.init(minute: minute.formatted(format)))
            minute += 60
        }
        for count in counts {
            guard let position = index[Int(count.minute.timeIntervalSince1970)] else { continue }
            if count.issued {
                minutes[position].issued += count.count
            } else {
                minutes[position].denied += count.count
                minutes[position].denied_by_reason[count.reason ?? "unknown", default: 0] += count.count
            }
        }
        return try AdminResponses.json(MinuteCounts(from: from.formatted(format), to: to.formatted(format), minutes: minutes))
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
                var position: StoredAuditEvent.Position?
                var pageSize = 0
                repeat {
                    // The connection goes back to the pool before the client gets a byte of the page.
                    let rows = try await events.page(filter, after: position, limit: Self.exportPageSize)
                    var lines = ByteBuffer()
                    for row in rows {
                        lines.writeBytes(try JSONCoding.bytes(of: Event(row)))
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
        filter.from = try time("from", in: request)
        filter.to = try time("to", in: request)
        filter.event = query["event"].map(String.init)
        filter.outcome = query["outcome"].map(String.init)
        if let outcome = filter.outcome, !["success", "failure"].contains(outcome) {
            throw .invalidRequest("outcome must be success or failure.")
        }
        filter.reason = query["reason"].map(String.init)
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
