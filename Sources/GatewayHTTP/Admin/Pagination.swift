import Foundation
import GatewayCore
import Hummingbird

/// `?limit=&cursor=` of list routes. The cursor is opaque to clients: the
/// base64url of the last id of the previous page.
struct Pagination {
    static let defaultLimit = 50
    static let maximumLimit = 200

    let limit: Int
    let after: UUID?

    init(_ request: Request) throws(GatewayError) {
        let query = request.uri.queryParameters
        self.limit = try Self.limit(request)
        if let cursor = query["cursor"] {
            guard let data = Base64URL.decode(cursor), let uuid = UUID(uuidString: String(decoding: data, as: UTF8.self)) else {
                throw .invalidRequest("cursor is not one this API gave out.")
            }
            self.after = uuid
        } else {
            self.after = nil
        }
    }

    /// The `limit` query parameter, or the default.
    static func limit(_ request: Request) throws(GatewayError) -> Int {
        guard let text = request.uri.queryParameters["limit"] else { return defaultLimit }
        guard let limit = Int(String(text)), (1...maximumLimit).contains(limit) else {
            throw .invalidRequest("limit must be a whole number from 1 to \(maximumLimit).")
        }
        return limit
    }

    /// The cursor of the page after `items`, when the page was full.
    func nextCursor<Item>(_ items: [Item], id: (Item) -> UUID) -> String? {
        guard items.count == limit, let last = items.last else { return nil }
        return Base64URL.encode(Data(id(last).uuidString.lowercased().utf8))
    }
}
