import Foundation
@testable import GatewayCore
@testable import GatewayHTTP
import GatewayPluginKit

/// The strict JSON reader under every admin body: what it accepts,
/// Foundation's reader also reads as an object with the same members; what
/// it writes back (``JSONText``) it reads again to the same value; a refusal
/// is a 400 through ``JSONInput``.
enum StrictJSONTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        let members: [String: JSONValue]
        switch Result(catching: { () throws(StrictJSONReader.Failure) in try StrictJSONReader.object(bytes) }) {
        case .success(let read):
            members = read
        case .failure:
            switch Result(catching: { () throws(GatewayError) in try JSONInput.parse(bytes) }) {
            case .success: try invariant(false, "JSONInput read what the strict reader refused")
            case .failure(let error): try invariant(error.kind == .invalidRequest, "JSONInput threw \(error)")
            }
            return
        }
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? [String: Any]
        guard let foundation else { throw InvariantFailure(description: "Foundation refused an object the strict reader read") }
        try invariant(Set(foundation.keys) == Set(members.keys), "member names differ from Foundation's")
        let again = try? StrictJSONReader.object(Array(JSONText.value(.object(members)).utf8))
        try invariant(again == members, "written back and read again, the object changed")
    }
}
