/// A stored row this binary cannot make sense of (a value outside what the
/// schema's checks allow, written by hand or by another version).
public struct UnreadableRow: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
