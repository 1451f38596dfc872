import Foundation

extension TOTPSecret {
    /// The secret sealed under `key` for one user of one app: sealed for
    /// another user, or moved to another row, it does not open.
    public func sealed(under key: MasterKey, for userID: String, in appID: AppID) throws -> [UInt8] {
        Array(try key.seal(bytes, context: Self.sealingContext(userID, appID)))
    }

    /// Opens what ``sealed(under:for:in:)`` made for the same user and app.
    public init(unsealing sealed: [UInt8], under key: MasterKey, for userID: String, in appID: AppID) throws {
        guard let secret = TOTPSecret(bytes: Array(try key.open(sealed, context: Self.sealingContext(userID, appID)))) else {
            throw GatewayError.internalError
        }
        self = secret
    }

    /// The authenticated data of a sealed secret (also what re-sealing needs).
    public static func sealingContext(_ userID: String, _ appID: AppID) -> String {
        "totp-secret:\(appID.uuid.lowercasedText):\(userID)"
    }
}
