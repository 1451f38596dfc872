@testable import GatewayCore
@testable import GatewayHTTP
import GatewayPluginKit

/// The token request body, JSON or form (the first byte chooses): a throw
/// is a 400 or 415; what decodes validates to the same fields or a 400; and
/// the fields, written again in either format, decode to themselves.
enum TokenRequestTarget {
    static func run(_ input: [UInt8]) throws(InvariantFailure) {
        guard let selector = input.first else { return }
        let body = Array(input.dropFirst())
        let contentType: String
        switch selector % 4 {
        case 0: contentType = "application/json"
        case 1: contentType = "application/x-www-form-urlencoded"
        case 2: contentType = "Application/JSON ; charset=utf-8"
        default:
            // The body is the Content-Type value: only the two media types are read.
            let value = String(decoding: body, as: UTF8.self)
            let media = TokenRequestFields.mediaType(of: value)
            let readable = media == "application/json" || media == "application/x-www-form-urlencoded"
            switch Result(catching: { () throws(GatewayError) in try TokenRequestFields(body: [], contentType: value) }) {
            case .success:
                try invariant(readable, "read \(value)")
            case .failure(let error):
                try invariant(readable ? error.kind == .invalidRequest : error.kind == .unsupportedMediaType, "\(value): \(error)")
            }
            return
        }
        let fields: TokenRequestFields
        switch Result(catching: { () throws(GatewayError) in try TokenRequestFields(body: body, contentType: contentType) }) {
        case .success(let read):
            fields = read
        case .failure(let error):
            try invariant(error.kind == .invalidRequest && error.code == .invalidRequest, "decoding threw \(error)")
            return
        }
        if let mismatch = fields.typeMismatch {
            // A member of the wrong type is kept for validation to refuse, once the app it names is known (so the
            // denial's row lands in that app's trail); the writers below have no way to write it.
            switch Result(catching: { () throws(GatewayError) in try fields.validated() }) {
            case .success: try invariant(false, "\(mismatch) validated")
            case .failure(let error): try invariant(error.code == .invalidRequest, "\(mismatch): validation threw \(error)")
            }
            return
        }
        try invariant(fields == (try? TokenRequestFields(body: json(fields), contentType: "application/json")),
            "JSON round trip of \(fields)")
        // A form has no way to send an empty credentials object: it reads as none.
        var formable = fields
        if formable.credentials?.isEmpty == true { formable.credentials = nil }
        try invariant(formable == (try? TokenRequestFields(body: form(fields), contentType: "application/x-www-form-urlencoded")),
            "form round trip of \(fields)")
        switch Result(catching: { () throws(GatewayError) in try fields.validated() }) {
        case .success(let request):
            try invariant(request.appID == AppID(fields.appID ?? ""), "app id changed")
            try invariant(
                request.userID == fields.userID && request.nonce == fields.nonce && request.deviceLabel == fields.deviceLabel,
                "text changed")
            let credentials = request.credentials.map { ["type": $0.type].merging($0.fields) { type, _ in type } }
            try invariant(credentials == fields.credentials, "credentials changed")
        case .failure(let error):
            try invariant(error.kind == .invalidRequest && error.code == .invalidRequest, "validation threw \(error)")
        }
    }

    static func json(_ fields: TokenRequestFields) -> [UInt8] {
        var members: [String] = []
        func add(_ name: String, _ value: String?) {
            if let value { members.append(JSONText.string(name) + ":" + JSONText.string(value)) }
        }
        add("app_id", fields.appID)
        add("user_id", fields.userID)
        add("nonce", fields.nonce)
        add("token_profile", fields.tokenProfile)
        add("device_label", fields.deviceLabel)
        if let credentials = fields.credentials {
            let inner = credentials.map { JSONText.string($0.key) + ":" + JSONText.string($0.value) }
            members.append("\"credentials\":{" + inner.joined(separator: ",") + "}")
        }
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }

    static func form(_ fields: TokenRequestFields) -> [UInt8] {
        var pairs: [String] = []
        func add(_ name: String, _ value: String?) {
            if let value { pairs.append(percentEncoded(name) + "=" + percentEncoded(value)) }
        }
        add("app_id", fields.appID)
        add("user_id", fields.userID)
        add("nonce", fields.nonce)
        add("token_profile", fields.tokenProfile)
        add("device_label", fields.deviceLabel)
        for (name, value) in fields.credentials ?? [:] { add("credentials[\(name)]", value) }
        return Array(pairs.joined(separator: "&").utf8)
    }

    /// Every byte but the unreserved ones as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return output
    }
}

/// JSON text written by hand, independently of the readers under test.
enum JSONText {
    static func string(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\u{0}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }

    static func value(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): number.isFinite ? "\(number)" : "0"
        case .string(let text): string(text)
        case .array(let items): "[" + items.map(Self.value).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { string($0.key) + ":" + Self.value($0.value) }.joined(separator: ",") + "}"
        }
    }
}
