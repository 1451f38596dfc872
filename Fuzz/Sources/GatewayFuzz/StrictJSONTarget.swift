import Foundation
@testable import GatewayCore
@testable import GatewayHTTP
import GatewayPluginKit

/// The strict JSON reader under every admin body: what it accepts,
/// Foundation's reader also reads as an object with the same members; what
/// it writes back (``JSONText``) it reads again to the same value; a refusal
/// is a 400 through ``JSONInput``.
enum StrictJSONTarget {
    static func run(_ bytes: [UInt8]) {
        let members: [String: JSONValue]
        do {
            members = try StrictJSONReader.object(bytes)
        } catch {
            do {
                _ = try JSONInput.parse(bytes)
                invariant(false, "JSONInput read what the strict reader refused")
            } catch {
                invariant(error.kind == .invalidRequest, "JSONInput threw \(error)")
            }
            return
        }
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? [String: Any]
        invariant(foundation != nil, "Foundation refused an object the strict reader read")
        invariant(Set(foundation!.keys) == Set(members.keys), "member names differ from Foundation's")
        let again = try? StrictJSONReader.object(Array(JSONText.value(.object(members)).utf8))
        invariant(again == members, "written back and read again, the object changed")
    }
}
