/// One fuzz target per parser that reads bytes from outside the gateway.
enum FuzzTarget: String, CaseIterable {
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

    func run(_ bytes: [UInt8]) {
        switch self {
        case .tokenRequest: TokenRequestTarget.run(bytes)
        case .strictJSON: StrictJSONTarget.run(bytes)
        case .identifiers: IdentifierTarget.run(bytes)
        case .passwordHash: PasswordHashTarget.run(bytes)
        case .privateKeyPEM: PrivateKeyPEMTarget.run(bytes)
        case .appSettings: AppSettingsTarget.run(bytes)
        case .userImportLine: UserImportLineTarget.run(bytes)
        case .requestID: RequestIDTarget.run(bytes)
        case .clientAddress: ClientAddressTarget.run(bytes)
        case .identityToken: IdentityTokenTarget.run(bytes)
        case .webhookAnswer: WebhookAnswerTarget.run(bytes)
        case .idToken: IDTokenTarget.run(bytes)
        }
    }
}
