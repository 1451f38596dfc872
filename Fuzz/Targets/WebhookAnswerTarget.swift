import GatewayCore
import Logging
@testable import WebhookPlugin

/// A tenant's answer to a webhook question: a verdict whose identity could
/// be a token request's (a valid user id, each profile field as its own
/// check accepts it), or a failure that says the answer could not be read;
/// nothing else.
enum WebhookAnswerTarget {
    static let logger = Logger(label: "fuzz")

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        switch Result(catching: { () throws(WebhookFailure) in try WebhookCall.answer(bytes, asked: "asked-user", logger: logger) }) {
        case .success(.invalid):
            break
        case .success(.valid(let identity)):
            try invariant(
                (try? TokenRequest.validatedUserID(identity.userID)) == identity.userID,
                "an invalid user id \(identity.userID.debugDescription)")
            for (field, value) in identity.profile.fields {
                try invariant(!value.isEmpty && value.utf8.count <= field.maximumBytes, "\(field.name) out of bounds")
                try invariant((try? field.checked(value)) == value, "\(field.name) \(value.debugDescription) fails its own check")
            }
        case .failure(let error):
            try invariant(error.reason == .badAnswer, "failed with \(error.reason)")
        }
    }
}
