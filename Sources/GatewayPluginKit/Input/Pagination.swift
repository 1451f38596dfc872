public import Foundation
public import GatewayCore
public import Hummingbird

/// `?limit=&cursor=` of list routes. The cursor is opaque to clients: the
/// base64url of the sort key (an id) of the previous page's last item.
public struct Pagination: Sendable {
    public static let defaultLimit = 50
    public static let maximumLimit = 200

    public let limit: Int
    /// The decoded cursor: list the items after this key.
    public let afterKey: String?

    public init(_ request: Request) throws(GatewayError) {
        self.limit = try Self.limit(request)
        if let cursor = request.uri.queryParameters["cursor"] {
            guard let data = Base64URL.decode(String(cursor)), let key = String(data: data, encoding: .utf8) else {
                throw Self.foreignCursor
            }
            self.afterKey = key
        } else {
            self.afterKey = nil
        }
    }

    /// The cursor as a UUID, for lists sorted by id.
    public func afterUUID() throws(GatewayError) -> UUID? {
        guard let afterKey else { return nil }
        guard let uuid = UUID(canonicalText: afterKey) else { throw Self.foreignCursor }
        return uuid
    }

    /// The `limit` query parameter, or the default.
    public static func limit(_ request: Request) throws(GatewayError) -> Int {
        guard let text = request.uri.queryParameters["limit"] else { return defaultLimit }
        guard let limit = Int(String(text)), (1...maximumLimit).contains(limit) else {
            throw .invalidRequest("limit must be a whole number from 1 to \(maximumLimit).")
        }
        return limit
    }

    /// The cursor of the page after `items`, when the page was full.
    public func nextCursor<Item>(_ items: [Item], key: (Item) -> String) -> String? {
        guard items.count == limit, let last = items.last else { return nil }
        return Base64URL.encode(Data(key(last).utf8))
    }

    /// The cursor of the page after `items` of a list sorted by id.
    public func nextCursor<Item>(_ items: [Item], id: (Item) -> UUID) -> String? {
        nextCursor(items) { id($0).lowercasedText }
    }

    private static let foreignCursor = GatewayError.invalidRequest("cursor is not one this API gave out.")
}
