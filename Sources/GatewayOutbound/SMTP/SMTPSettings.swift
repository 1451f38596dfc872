
/// Where and how to hand a message to an SMTP server: an app's sender,
/// as its options say (the email plugin reads and checks them).
public struct SMTPSettings: Sendable, Hashable {
    public enum Security: String, Sendable, Hashable {
        /// Plain connection, then STARTTLS, required: a server that does not
        /// offer it gets nothing (no downgrade). Port 587 or 25.
        case startTLS = "starttls"
        /// TLS from the first byte (port 465, RFC 8314).
        case implicitTLS = "implicit"
        /// No TLS at all: development apps only.
        case none
    }

    public struct Credentials: Sendable, Hashable {
        public let username: String
        public let password: String

        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    public let host: String
    public let port: Int
    public let security: Security
    public let credentials: Credentials?
    /// The name the client greets with (EHLO), a domain of the sender's.
    public let greetingName: String
    /// Bounds one message's whole exchange: connecting, the greeting, TLS, AUTH and DATA.
    public let timeout: Duration

    public init(
        host: String, port: Int, security: Security, credentials: Credentials?, greetingName: String,
        timeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.credentials = credentials
        self.greetingName = greetingName
        self.timeout = timeout
    }

    /// The ports a public SMTP server is reached on: submission (587),
    /// submissions (465), relay (25) and the common alternative 2525.
    public static let submissionPorts: Set<Int> = [25, 465, 587, 2525]
}

/// One message as SMTP carries it: the envelope's sender and recipient
/// (`MAIL FROM`, `RCPT TO`) and the message's bytes (RFC 5322, CRLF lines).
public struct SMTPEnvelope: Sendable {
    public let sender: String
    public let recipient: String
    public let message: [UInt8]

    public init(sender: String, recipient: String, message: [UInt8]) {
        self.sender = sender
        self.recipient = recipient
        self.message = message
    }
}
