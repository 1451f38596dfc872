/// One page of a list the admin API answers: its items and, when there are
/// more, the cursor of the next page.
public struct ListAnswer<Item: Decodable & Sendable>: Decodable, Sendable {
    public let items: [Item]
    public let nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor"
    }
}
