/// Where a one-time code travels: a phone number, an email address. Each
/// channel has its own address type, read and normalised by its own rules,
/// so that one address has one text (the key its code is stored under).
public protocol CodeAddress: Sendable, Hashable, CustomStringConvertible {
    /// The normalised text: what the code's row and its HMAC are keyed by.
    var text: String { get }
}

extension CodeAddress {
    public var description: String { text }
}
