/// A validated request for an identity token. Build it with
/// ``init(appID:userID:nonce:credentials:)`` from the raw fields the client sent;
/// every check answers 400 `invalid_request` naming the field.
public struct TokenRequest: Sendable, Equatable {
    public static let maximumUserIDBytes = 256
    public static let maximumNonceBytes = 1024
    /// How many more nonces one refresh may ask tokens for (``additionalNonces``).
    public static let maximumAdditionalNonces = 63

    public let appID: AppID
    /// The user the client claims to be; some credential types derive it instead.
    public let userID: String?
    /// The Layer nonce, byte for byte as received.
    public let nonce: String
    /// More nonces a refresh asks a token for each (`additional_nonces`), each
    /// checked as ``nonce`` is: a client that holds several challenges at once
    /// answers them with one rotation of its session. Empty for most requests.
    public let additionalNonces: [String]
    /// `nil` when the client sent none (Layer's quick-start clients send none).
    public let credentials: Credentials?
    /// The token profile asked for (`token_profile`); `nil` means the app's first.
    public let tokenProfile: String?
    /// What the client calls its device (`device_label`), for the session a
    /// sign-in starts: 1 to 128 bytes, no control characters.
    public let deviceLabel: String?

    public static let maximumDeviceLabelBytes = 128

    public init(
        appID: String?, userID: String?, nonce: String?, credentials: Credentials?, tokenProfile: String? = nil,
        deviceLabel: String? = nil, additionalNonces: [String] = []
    ) throws(GatewayError) {
        self.appID = try Self.validatedAppID(appID)
        self.userID = try userID.map { text throws(GatewayError) in try Self.validatedUserID(text) }
        self.nonce = try Self.validatedNonce(nonce)
        guard additionalNonces.count <= Self.maximumAdditionalNonces else {
            throw .invalidRequest("additional_nonces may hold at most \(Self.maximumAdditionalNonces) nonces.")
        }
        for nonce in additionalNonces {
            do {
                _ = try Self.validatedNonce(nonce)
            } catch {
                throw .invalidRequest("additional_nonces: " + error.message)
            }
        }
        self.additionalNonces = additionalNonces
        if let credentials {
            try Self.validate(credentials)
        }
        self.credentials = credentials
        if let tokenProfile {
            guard (1...32).contains(tokenProfile.utf8.count),
                tokenProfile.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F })
            else {
                throw .invalidRequest("token_profile must be a profile name: 1 to 32 of a-z, 0-9 and _.")
            }
        }
        self.tokenProfile = tokenProfile
        if let deviceLabel {
            guard (1...Self.maximumDeviceLabelBytes).contains(deviceLabel.utf8.count),
                !deviceLabel.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw .invalidRequest("device_label must be 1 to \(Self.maximumDeviceLabelBytes) bytes without control characters.")
            }
        }
        self.deviceLabel = deviceLabel
    }

    /// Parses an app id in any accepted form.
    public static func validatedAppID(_ text: String?) throws(GatewayError) -> AppID {
        guard let text, !text.isEmpty else { throw .invalidRequest("app_id is required.") }
        guard let appID = AppID(text) else {
            throw .invalidRequest(
                "app_id must be layer:///apps/staging/<uuid>, layer:///apps/production/<uuid> or a bare UUID.")
        }
        return appID
    }

    /// `text` if it can be a user id, or the 400 naming `field` that says why
    /// not. One rule for token requests and every admin input that names a
    /// user, so no user can be stored that could never sign in.
    public static func validatedUserID(_ text: String, field: String = "user_id") throws(GatewayError) -> String {
        let length = text.utf8.count
        guard length >= 1, length <= maximumUserIDBytes else {
            throw .invalidRequest("\(field) must be 1 to \(maximumUserIDBytes) bytes of UTF-8.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidRequest("\(field) must not contain control characters.")
        }
        return text
    }

    static func validatedNonce(_ text: String?) throws(GatewayError) -> String {
        guard let text, !text.isEmpty else { throw .invalidRequest("nonce is required.") }
        guard text.utf8.count <= maximumNonceBytes else {
            throw .invalidRequest("nonce must be at most \(maximumNonceBytes) bytes.")
        }
        if text.utf8.contains(UInt8(ascii: " ")) {
            throw .invalidRequest(
                "nonce contains a space: it was probably URL-decoded, which turns '+' into ' '. "
                    + "Send the nonce exactly as the Layer SDK returned it (percent-encode it once in a form body).")
        }
        guard text.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw .invalidRequest("nonce must be visible ASCII characters only.")
        }
        return text
    }

    static func validate(_ credentials: Credentials) throws(GatewayError) {
        guard !credentials.type.isEmpty else { throw .invalidRequest("credentials.type is required.") }
        guard credentials.type.utf8.count <= 64 else { throw .invalidRequest("credentials.type is too long.") }
        guard credentials.fields.count <= Credentials.maximumFieldCount else {
            throw .invalidRequest("credentials has more than \(Credentials.maximumFieldCount) fields.")
        }
        for (name, value) in credentials.fields.sorted(by: { $0.key < $1.key }) {
            guard name.utf8.count <= Credentials.maximumNameBytes else {
                throw .invalidRequest("credentials has a field name longer than \(Credentials.maximumNameBytes) bytes.")
            }
            let maximum = Credentials.maximumBytes(of: name)
            guard value.utf8.count <= maximum else {
                throw .invalidRequest("credentials.\(name) must be at most \(maximum) bytes.")
            }
        }
    }
}
