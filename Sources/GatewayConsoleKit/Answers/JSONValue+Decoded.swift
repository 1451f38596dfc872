public import GatewayCore
import Foundation

extension JSONValue {
    /// This value as `Answer`, or `nil` when it does not have that shape.
    public func decoded<Answer: Decodable>(_: Answer.Type) -> Answer? {
        guard let data = try? JSONEncoder().encode(self) else { return nil }
        return try? JSONDecoder().decode(Answer.self, from: data)
    }
}
