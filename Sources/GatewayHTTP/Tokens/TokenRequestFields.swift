import Foundation
public import GatewayCore

/// The raw fields of a token request body, before validation. Reads
/// `application/json` and `application/x-www-form-urlencoded`; a form value is
/// percent-decoded exactly once, by the form rules, and never again.
public struct TokenRequestFields: Equatable {
    var appID: String?
    var userID: String?
    var nonce: String?
    var credentials: Credentials?

    init(appID: String?, userID: String?, nonce: String?, credentials: Credentials?) {
        self.appID = appID
        self.userID = userID
        self.nonce = nonce
        self.credentials = credentials
    }

    /// Decodes `body` according to `contentType` (415 for any other type).
    public init(body: [UInt8], contentType: String?) throws(GatewayError) {
        let mediaType = contentType?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        switch mediaType {
        case "application/json":
            self = try Self.decodeJSON(body)
        case "application/x-www-form-urlencoded":
            self = try Self.decodeForm(body)
        default:
            throw GatewayError(
                .unsupportedMediaType, status: 415,
                "Send the request as application/json or application/x-www-form-urlencoded.")
        }
    }

    /// Validates the fields into a ``TokenRequest``.
    public func validated() throws(GatewayError) -> TokenRequest {
        try TokenRequest(appID: appID, userID: userID, nonce: nonce, credentials: credentials)
    }

    // MARK: JSON

    private struct JSONBody: Decodable {
        let app_id: String?
        let user_id: String?
        let nonce: String?
        let credentials: [String: String]?
    }

    private static func decodeJSON(_ body: [UInt8]) throws(GatewayError) -> TokenRequestFields {
        let decoded: JSONBody
        do {
            decoded = try JSONDecoder().decode(JSONBody.self, from: Data(body))
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            throw .invalidRequest("\(fieldName(context.codingPath)) must be a string.")
        } catch let DecodingError.valueNotFound(_, context) where !context.codingPath.isEmpty {
            throw .invalidRequest("\(fieldName(context.codingPath)) must be a string.")
        } catch {
            throw .invalidRequest("The body is not a JSON object.")
        }
        return TokenRequestFields(
            appID: decoded.app_id, userID: decoded.user_id, nonce: decoded.nonce,
            credentials: try decoded.credentials.map(credentials(from:)))
    }

    private static func fieldName(_ path: [any CodingKey]) -> String {
        path.map(\.stringValue).joined(separator: ".")
    }

    // MARK: Form

    private static func decodeForm(_ body: [UInt8]) throws(GatewayError) -> TokenRequestFields {
        var fields: [String: String] = [:]
        var credentialFields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try FormDecoding.decode(parts[0])
            let value = try FormDecoding.decode(parts.count > 1 ? parts[1] : [])
            if name.hasPrefix("credentials["), name.hasSuffix("]") {
                credentialFields[String(name.dropFirst("credentials[".count).dropLast())] = value
            } else {
                fields[name] = value
            }
        }
        return TokenRequestFields(
            appID: fields["app_id"], userID: fields["user_id"], nonce: fields["nonce"],
            credentials: credentialFields.isEmpty ? nil : try credentials(from: credentialFields))
    }

    private static func credentials(from fields: [String: String]) throws(GatewayError) -> Credentials {
        var fields = fields
        guard let type = fields.removeValue(forKey: "type") else {
            throw .invalidRequest("credentials.type is required.")
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
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
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

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
