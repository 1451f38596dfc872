/// A member of an answer that is written as JSON `null` when it has no
/// value, rather than left out as the synthesized encoder leaves an
/// optional: for members openapi.yaml makes required (`next_cursor`, a
/// factor's `confirmed_at`), so an answer never needs a hand-written encoder
/// for one.
@propertyWrapper
public struct WrittenAsNull<Value: Encodable & Sendable>: Encodable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
