/// Why a call out of the gateway (``OutboundHTTP``) failed, for the audit
/// trail and the log; never shown to the client.
public struct OutboundFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// ``OutboundAddressPolicy`` refused the address: nothing was sent.
        case addressRefused = "address_refused"
        /// No answer: refused, reset or unresolvable.
        case noAnswer = "no_answer"
        /// No whole answer before the caller's timeout.
        case timedOut = "timed_out"
        /// The answer's body is larger than the caller accepts.
        case answerTooLarge = "answer_too_large"
    }

    public let kind: Kind
    /// What happened, for the log.
    public let reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { reason }
}
