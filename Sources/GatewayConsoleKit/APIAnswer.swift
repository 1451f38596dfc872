import Foundation
public import GatewayCore
public import HTTPTypes
public import Hummingbird
import NIOCore

/// What an admin API call answered, read for a page: its status and its
/// JSON body as values a template renders (objects as dictionaries, `null`
/// left out so a section over it is false).
public struct APIAnswer: Sendable {
    public let status: HTTPResponse.Status
    public let json: JSONValue

    public static let largestAnswer = 8 * 1024 * 1024

    public static func read(_ response: Response) async -> APIAnswer {
        var body = ByteBuffer()
        let writer = CollectingWriter()
        do {
            try await response.body.write(writer)
            body = await writer.collected
        } catch {
            return APIAnswer(status: .internalServerError, json: .object([:]))
        }
        let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView))) ?? .object([:])
        return APIAnswer(status: response.status, json: json)
    }

    public var succeeded: Bool { (200..<300).contains(status.code) }

    /// The API's error code (`invalid_request`, ...) when it refused.
    public var errorCode: String? { string("error") }

    /// The API's sentence for a refusal, for the page to show.
    public var errorMessage: String {
        string("message") ?? "The request failed (HTTP \(status.code))."
    }

    public func string(_ name: String) -> String? {
        guard case .object(let members) = json, case .string(let text)? = members[name] else { return nil }
        return text
    }

    /// The body as `Answer`, or `nil` when it does not have that shape.
    public func decoded<Answer: Decodable>(_: Answer.Type) -> Answer? {
        guard let data = try? JSONEncoder().encode(json) else { return nil }
        return try? JSONDecoder().decode(Answer.self, from: data)
    }

    /// The body for a template.
    public var value: Any { Self.templateValue(json) ?? [String: Any]() }

    /// `items` of a page answer, each for a template.
    public var items: [[String: Any]] {
        guard case .object(let members) = json, case .array(let items)? = members["items"] else { return [] }
        return items.compactMap { Self.templateValue($0) as? [String: Any] }
    }

    public var nextCursor: String? { string("next_cursor") }

    public static func templateValue(_ json: JSONValue) -> Any? {
        switch json {
        case .null: nil
        case .bool(let value): value
        case .number(let value): value.rounded() == value && abs(value) < 1e15 ? Int(value) : value
        case .string(let value): value
        case .array(let values): values.compactMap(templateValue)
        case .object(let members): members.compactMapValues(templateValue)
        }
    }
}

/// Collects a response body that the console reads rather than forwards.
actor CollectingWriter: ResponseBodyWriter {
    private(set) var collected = ByteBuffer()

    func write(_ buffer: ByteBuffer) async throws {
        guard collected.readableBytes + buffer.readableBytes <= APIAnswer.largestAnswer else {
            throw GatewayError.internalError
        }
        var buffer = buffer
        collected.writeBuffer(&buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
