import Foundation
@testable import GatewayCore

/// App, key and provider ids, user ids and nonces: an id that parses writes
/// itself in a form that parses to the same id; a user id or nonce that
/// validates is the text itself, and a refusal is a 400.
enum IdentifierTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let input = text(bytes) else { return }
        try roundTrip(AppID.self, input)
        try roundTrip(KeyID.self, input)
        try roundTrip(ProviderID.self, input)
        switch Result(catching: { () throws(GatewayError) in try TokenRequest.validatedUserID(input) }) {
        case .success(let userID):
            try invariant(userID == input, "user id changed")
            try invariant(!userID.utf8.contains(0), "user id holds NUL")
        case .failure(let error):
            try invariant(error.kind == .invalidRequest, "user id threw \(error)")
        }
        switch Result(catching: { () throws(GatewayError) in try TokenRequest.validatedNonce(input) }) {
        case .success(let nonce):
            try invariant(nonce == input && nonce.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "nonce \(nonce)")
        case .failure(let error):
            try invariant(error.kind == .invalidRequest, "nonce threw \(error)")
        }
    }

    static func roundTrip<ID: LayerIdentifier>(_ type: ID.Type, _ input: String) throws(InvariantFailure) {
        guard let id = ID(input) else { return }
        try invariant(ID(id.description) == id, "\(ID.self) \(id) does not read its own text")
        try invariant(ID(id.uuid.uuidString) == id, "\(ID.self) \(id) does not read its bare UUID")
        // Only ASCII case is ignored: the text is the bare UUID or one of the URI forms.
        let folded = String(decoding: input.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        let uuid = id.uuid.uuidString.lowercased()
        try invariant(
            folded == uuid || ID.uriPrefixes.contains { folded == "layer:///" + $0 + uuid },
            "\(input.debugDescription) read as \(id)")
    }
}
