import GatewayCore
import GatewayPluginKit

extension TokenRequestFields {
    /// Why a JSON body could not be read.
    enum JSONFailure: Error, Equatable {
        /// Not JSON, a member named twice, or nesting too deep.
        case syntax(StrictJSONReader.Failure)
        /// A member at this dotted path holds something other than a string.
        case notAString(path: String)
        /// A member that must hold an object holds something else.
        case notAnObject(path: String)
        /// A member that must hold an array of strings holds something else.
        case notAStringArray(path: String)
    }

    /// Reads a JSON body in one pass over its bytes (``StrictJSONReader``): an
    /// object whose `app_id`, `user_id`, `nonce`, `token_profile` and `device_label` are strings or null and
    /// whose `credentials` is an object of strings, or null, and
    /// `additional_nonces` an array of strings, or null. Other members may
    /// hold any JSON value; they are checked and skipped. Only a syntax
    /// error throws here: the first member of the wrong type is kept in
    /// ``typeMismatch`` with every string read, and thrown by
    /// ``validated()``, so the request's app is known and its denial has a row.
    ///
    /// Written by hand because `JSONDecoder` with `Codable` cost more than the
    /// rest of the request's parsing together.
    init(json bytes: [UInt8]) throws(JSONFailure) {
        var reader = StrictJSONReader(bytes: bytes)
        var appID: String?
        var userID: String?
        var nonce: String?
        var credentials: [String: String]?
        var tokenProfile: String?
        var deviceLabel: String?
        var additionalNonces: [String]?
        var firstMismatch: JSONFailure?
        do throws(StrictJSONReader.Failure) {
            try reader.readObject { name, reader throws(StrictJSONReader.Failure) in
                switch name {
                case "app_id", "user_id", "nonce", "token_profile", "device_label":
                    let value: String?
                    switch try reader.readOptionalString() {
                    case .string(let text): value = text
                    case .null: value = nil
                    case .other:
                        firstMismatch = firstMismatch ?? .notAString(path: name)
                        return
                    }
                    switch name {
                    case "app_id": appID = value
                    case "user_id": userID = value
                    case "token_profile": tokenProfile = value
                    case "device_label": deviceLabel = value
                    default: nonce = value
                    }
                case "credentials":
                    guard reader.peek() == UInt8(ascii: "{") else {
                        switch try reader.readOptionalString() {
                        case .null: break
                        case .string, .other: firstMismatch = firstMismatch ?? .notAnObject(path: name)
                        }
                        return
                    }
                    var fields: [String: String] = [:]
                    try reader.readObject { field, reader throws(StrictJSONReader.Failure) in
                        if case .string(let text) = try reader.readOptionalString() {
                            fields[field] = text
                        } else {
                            firstMismatch = firstMismatch ?? .notAString(path: "credentials.\(field)")
                        }
                    }
                    credentials = fields
                case "additional_nonces":
                    // Read whole (the body's size and the reader's depth bound it); anything but strings is refused.
                    switch try reader.readValue(depth: 1) {
                    case .null: break
                    case .array(let items):
                        var texts: [String] = []
                        for item in items {
                            guard case .string(let text) = item else {
                                firstMismatch = firstMismatch ?? .notAStringArray(path: name)
                                return
                            }
                            texts.append(text)
                        }
                        additionalNonces = texts
                    default: firstMismatch = firstMismatch ?? .notAStringArray(path: name)
                    }
                default:
                    try reader.skipValue(depth: 1)
                }
            }
            reader.skipWhitespace()
            guard reader.atEnd else { throw .malformed }
        } catch {
            throw .syntax(error)
        }
        self.init(
            appID: appID, userID: userID, nonce: nonce, credentials: credentials, tokenProfile: tokenProfile,
            deviceLabel: deviceLabel)
        self.additionalNonces = additionalNonces
        typeMismatch = firstMismatch
    }
}
