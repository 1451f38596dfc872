/// Why a message was not handed over, for the outbox's record and the log;
/// never shown to a client. ``isTransient`` says whether to try again.
public struct SMTPFailure: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: String, Sendable {
        /// The address policy refused the server's address or port: nothing was sent.
        case addressRefused = "address_refused"
        /// No connection, or it closed before the exchange ended.
        case noConnection = "no_connection"
        /// The exchange took longer than the settings' timeout.
        case timedOut = "timed_out"
        /// TLS was required and the server did not offer STARTTLS: nothing was sent.
        case tlsUnavailable = "tls_unavailable"
        /// The TLS handshake failed (a certificate not trusted or for another name).
        case tlsFailed = "tls_failed"
        /// Credentials were set and the server offers no AUTH mechanism the client speaks.
        case authUnavailable = "auth_unavailable"
        /// The server answered with a failure code (``reply``).
        case refused
        /// The server broke the protocol (a malformed reply, bytes before the TLS handshake).
        case protocolViolation = "protocol_violation"
    }

    public let kind: Kind
    public let reason: String
    /// The server's reply, for ``Kind/refused``.
    public let reply: SMTPReply?

    public init(_ kind: Kind, _ reason: String, reply: SMTPReply? = nil) {
        self.kind = kind
        self.reason = reason
        self.reply = reply
    }

    /// A 4xx reply, no connection, a timeout, a broken exchange: the next
    /// attempt may succeed. A 5xx reply, a refused address, missing TLS or
    /// AUTH, a failed handshake: it will not, and must not be retried blindly.
    public var isTransient: Bool {
        switch kind {
        case .noConnection, .timedOut, .protocolViolation: true
        case .refused: reply?.isTransient ?? false
        case .addressRefused, .tlsUnavailable, .tlsFailed, .authUnavailable: false
        }
    }

    public var description: String { reply.map { "\(reason): \($0)" } ?? reason }
}
