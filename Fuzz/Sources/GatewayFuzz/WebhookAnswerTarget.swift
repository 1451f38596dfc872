import GatewayCore
import Logging
@testable import WebhookPlugin

/// A tenant's answer to a webhook question: a verdict whose identity could
/// be a token request's (a valid user id, bounded profile fields), or a
/// failure that says the answer could not be read; nothing else.
enum WebhookAnswerTarget {
    static let logger = Logger(label: "fuzz")

    static func run(_ bytes: [UInt8]) {
        do {
            switch try WebhookCall.answer(bytes, asked: "asked-user", logger: logger) {
            case .invalid:
                break
            case .valid(let identity):
                invariant(
                    (try? TokenRequest.validatedUserID(identity.userID)) == identity.userID,
                    "an invalid user id \(identity.userID.debugDescription)")
                for name in [identity.firstName, identity.lastName, identity.displayName] {
                    invariant((name?.utf8.count ?? 0) <= 256 && name?.isEmpty != true, "a profile name out of bounds")
                }
                invariant((identity.avatarURL?.utf8.count ?? 0) <= 2048, "an avatar URL out of bounds")
            }
        } catch {
            invariant(error.reason == .badAnswer, "failed with \(error.reason)")
        }
    }
}
