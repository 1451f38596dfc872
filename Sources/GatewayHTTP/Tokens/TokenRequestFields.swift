public import GatewayCore
import GatewayPluginKit

/// A token request read in two steps: ``init(body:contentType:)`` reads the
/// fields as the client sent them (this type), ``validated()`` checks them
/// into a ``TokenRequest``.
///
/// Reads `application/json` (``init(json:)``) and
/// `application/x-www-form-urlencoded`; a form value is percent-decoded
/// exactly once, by the form rules, and never again. A name given twice is
/// refused in either, so no proxy or log in front of the gateway can read one
/// value while the gateway uses another.
public struct TokenRequestFields: Equatable {
    var appID: String?
    var userID: String?
    var nonce: String?
    /// The credentials object's members, `type` among them; `nil` when absent or null.
    var credentials: [String: String]?
    var tokenProfile: String?
    var deviceLabel: String?
    /// A JSON body's `additional_nonces` (a refresh's further challenges); none in a form body.
    var additionalNonces: [String]?
    /// A JSON body's first member of the wrong type (a number nonce, an
    /// object refresh token), refused by ``validated()``.
    var typeMismatch: JSONFailure?

    init(
        appID: String?, userID: String?, nonce: String?, credentials: [String: String]?, tokenProfile: String? = nil,
        deviceLabel: String? = nil
    ) {
        self.appID = appID
        self.userID = userID
        self.nonce = nonce
        self.credentials = credentials
        self.tokenProfile = tokenProfile
        self.deviceLabel = deviceLabel
    }

    /// Decodes `body` according to `contentType` (415 for any other type).
    public init(body: [UInt8], contentType: String?) throws(GatewayError) {
        switch contentType.map(Self.mediaType(of:)) {
        case "application/json":
            self = try Self.decodeJSON(body)
        case "application/x-www-form-urlencoded":
            self = try Self.decodeForm(body)
        default:
            throw GatewayError(
                .unsupportedMediaType, .unsupportedMediaType,
                "Send the request as application/json or application/x-www-form-urlencoded.")
        }
    }

    /// The media type of a `Content-Type` value, lowercased, without its
    /// parameters or the spaces around it (RFC 9110, section 8.3.1).
    static func mediaType(of contentType: String) -> String {
        var bytes = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }[...]
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes.removeLast() }
        return String(decoding: bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Validates the fields into a ``TokenRequest``; the credentials' text first.
    public func validated() throws(GatewayError) -> TokenRequest {
        switch typeMismatch {
        case .notAString(let path)?: throw .invalidRequest("\(path) must be a string.")
        case .notAnObject(let path)?: throw .invalidRequest("\(path) must be an object of strings.")
        case .notAStringArray(let path)?: throw .invalidRequest("\(path) must be an array of strings.")
        case .syntax(let failure)?: throw failure.gatewayError()
        case nil: break
        }
        let credentials = try credentials.map { fields throws(GatewayError) in try Self.credentials(from: fields) }
        return try TokenRequest(
            appID: appID, userID: userID, nonce: nonce, credentials: credentials, tokenProfile: tokenProfile,
            deviceLabel: deviceLabel, additionalNonces: additionalNonces ?? [])
    }

    // MARK: JSON

    private static func decodeJSON(_ body: [UInt8]) throws(GatewayError) -> TokenRequestFields {
        do {
            return try TokenRequestFields(json: body)
        } catch {
            switch error {
            case .syntax(let failure): throw failure.gatewayError()
            case .notAString, .notAnObject, .notAStringArray: preconditionFailure("init(json:) throws only syntax errors")
            }
        }
    }

    // MARK: Form

    private static func decodeForm(_ body: [UInt8]) throws(GatewayError) -> TokenRequestFields {
        var fields: [String: String] = [:]
        var credentialFields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try FormDecoding.decode(parts[0])
            let value = try FormDecoding.decode(parts.count > 1 ? parts[1] : [])
            let isNew: Bool
            // By bytes, not characters: a name whose first letter is a combining mark makes one character of it
            // and the bracket, and was read as no credential at all (the token-request fuzz target found it).
            let bytes = Array(name.utf8)
            let prefix = Array("credentials[".utf8)
            if bytes.count > prefix.count, bytes.starts(with: prefix), bytes.last == UInt8(ascii: "]") {
                let key = String(decoding: bytes[prefix.count..<(bytes.count - 1)], as: UTF8.self)
                isNew = credentialFields.updateValue(value, forKey: key) == nil
            } else {
                isNew = fields.updateValue(value, forKey: name) == nil
            }
            guard isNew else { throw .invalidRequest("The form body names a field twice.") }
        }
        return TokenRequestFields(
            appID: fields["app_id"], userID: fields["user_id"], nonce: fields["nonce"],
            credentials: credentialFields.isEmpty ? nil : credentialFields, tokenProfile: fields["token_profile"],
            deviceLabel: fields["device_label"])
    }

    // MARK: Validation

    /// The credentials object, its text checked here for both body kinds: a
    /// type or field name is an identifier, with no control characters; no
    /// value may hold U+0000, which PostgreSQL refuses in any text (the type,
    /// a phone number, reach the audit trail and the rate-limit counters).
    private static func credentials(from fields: [String: String]) throws(GatewayError) -> Credentials {
        var fields = fields
        guard let type = fields.removeValue(forKey: "type") else {
            throw .invalidRequest("credentials.type is required.")
        }
        func hasControl(_ text: String) -> Bool { text.unicodeScalars.contains { $0.properties.generalCategory == .control } }
        guard !hasControl(type) else { throw .invalidRequest("credentials.type must not contain control characters.") }
        for (name, value) in fields {
            guard !hasControl(name) else { throw .invalidRequest("credentials names a field with control characters.") }
            guard !value.utf8.contains(0) else {
                throw .invalidRequest("credentials.\(name) must not contain the NUL character (\\u0000).")
            }
        }
        return Credentials(type: type, fields: fields)
    }
}

/// `application/x-www-form-urlencoded` value decoding (WHATWG URL, "urlencoded parsing").
enum FormDecoding {
    static func decode(_ bytes: some Collection<UInt8>) throws(GatewayError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next()?.hexDigitValue, let low = iterator.next()?.hexDigitValue else {
                    throw .invalidRequest("The form body has a malformed percent-escape.")
                }
                output.append(high << 4 | low)
            default:
                output.append(byte)
            }
        }
        guard let text = String(validating: output, as: UTF8.self) else {
            throw .invalidRequest("The form body is not valid UTF-8 once decoded.")
        }
        return text
    }
}
