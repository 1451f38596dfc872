/// One fuzz target per parser that reads bytes from outside the gateway,
/// named as its seeds' folder in `Fuzz/Corpus/`. libFuzzer runs them
/// instrumented (`scripts/fuzz`); `FuzzReplayTests` runs every committed
/// input through them in every `./scripts/test`.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case tokenRequest = "token-request"
    case strictJSON = "strict-json"
    case identifiers
    case passwordHash = "password-hash"
    case privateKeyPEM = "private-key-pem"
    case appSettings = "app-settings"
    case userImportLine = "user-import-line"
    case requestID = "request-id"
    case clientAddress = "client-address"
    case identityToken = "identity-token"
    case webhookAnswer = "webhook-answer"
    case idToken = "id-token"
    case refreshToken = "refresh-token"
    case secondFactorCode = "second-factor-code"
    case cbor = "cbor"
    case passkeyResponse = "passkey-response"

    /// Parses `bytes` as this target's parser does and checks its invariants.
    public func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        switch self {
        case .tokenRequest: try TokenRequestTarget.run(bytes)
        case .strictJSON: try StrictJSONTarget.run(bytes)
        case .identifiers: try IdentifierTarget.run(bytes)
        case .passwordHash: try PasswordHashTarget.run(bytes)
        case .privateKeyPEM: try PrivateKeyPEMTarget.run(bytes)
        case .appSettings: try AppSettingsTarget.run(bytes)
        case .userImportLine: try UserImportLineTarget.run(bytes)
        case .requestID: try RequestIDTarget.run(bytes)
        case .clientAddress: try ClientAddressTarget.run(bytes)
        case .identityToken: try IdentityTokenTarget.run(bytes)
        case .webhookAnswer: try WebhookAnswerTarget.run(bytes)
        case .idToken: try IDTokenTarget.run(bytes)
        case .refreshToken: try RefreshTokenTarget.run(bytes)
        case .secondFactorCode: try SecondFactorCodeTarget.run(bytes)
        case .cbor: try CBORTarget.run(bytes)
        case .passkeyResponse: try PasskeyResponseTarget.run(bytes)
        }
    }
}
