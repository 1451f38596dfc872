import Foundation
import Logging
public import GatewayCore
public import HTTPTypes
public import Hummingbird
import NIOCore

/// What an admin API call answered, read for a page: its status and its
/// JSON body, read as a typed answer (``read(_:_:_:)``: `ListAnswer`,
/// `AppAnswer`, a page's own) whose fields the page hands its template.
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
        let json = (try? JSONCoding.value(body.readableBytesView)) ?? .object([:])
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
    public func decoded<Answer: Decodable>(_: Answer.Type) -> Answer? { json.decoded(Answer.self) }

    /// The body of a successful answer as `Answer`; otherwise throws the
    /// page to show instead: the API's refusal (``PageRenderer/apiFailure(_:visit:)``),
    /// or a 500 when the body does not have `Answer`'s shape (the console
    /// and the API it calls in-process disagree: a bug, logged).
    public func read<Answer: Decodable>(
        _: Answer.Type, _ visit: ConsoleVisit, _ pages: PageRenderer
    ) throws(PageAnswer) -> Answer {
        guard succeeded else { throw PageAnswer(pages.apiFailure(self, visit: visit)) }
        guard let answer = decoded(Answer.self) else {
            visit.context.logger.error(
                "console could not read an admin API answer", metadata: ["expected": "\(Answer.self)"])
            throw PageAnswer(
                pages.page(
                    "message", title: "Request failed", visit: visit,
                    data: ["message": "The console could not read the admin API's answer."], status: .internalServerError))
        }
        return answer
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
