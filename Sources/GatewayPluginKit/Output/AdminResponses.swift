public import Foundation
import GatewayCore
public import Hummingbird
import NIOCore

/// How admin routes answer: JSON with one encoder, pages, no content.
public enum AdminResponses {
    public struct Page<Item: Encodable>: Encodable {
        public let items: [Item]
        /// `null` on the last page: openapi.yaml makes it a required member.
        @WrittenAsNull public var next_cursor: String?

        public init(items: [Item], next_cursor: String?) {
            self.items = items
            self.next_cursor = next_cursor
        }
    }

    /// A JSON answer, written by ``JSONCoding`` (stable member order, `/` unescaped).
    public static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONCoding.bytes(of: value))))
    }

    public static func noContent() -> Response {
        Response(status: .noContent)
    }
}

/// RFC 3339 in UTC with seconds, as every time in the API is written.
public func timestamp(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
}
