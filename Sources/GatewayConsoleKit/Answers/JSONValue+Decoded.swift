public import GatewayCore

extension JSONValue {
    /// This value as `Answer`, or `nil` when it does not have that shape.
    public func decoded<Answer: Decodable>(_: Answer.Type) -> Answer? {
        try? JSONCoding.decode(Answer.self, from: self)
    }
}
