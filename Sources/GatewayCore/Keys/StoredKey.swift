public import Foundation

/// A tenant key as stored: its public half in clear, its private half sealed
/// under the master key.
public struct StoredKey: Sendable, Equatable {
    /// Keys an app may hold, whatever their state. Every one is in the app's
    /// JWKS and in each replica's memory, so an app admin must not be able
    /// to grow them without bound; rotation needs two or three.
    public static let maximumPerApp = 20

    public var appID: AppID
    public var keyID: KeyID
    public var status: KeyStatus
    public var bits: Int
    public var publicKeyPEM: String
    public var sealedPrivateKey: Data
    public var createdAt: Date
    public var activatedAt: Date?
    public var retiredAt: Date?

    public init(
        appID: AppID, keyID: KeyID, status: KeyStatus, bits: Int, publicKeyPEM: String,
        sealedPrivateKey: Data, createdAt: Date = Date()
    ) {
        self.appID = appID
        self.keyID = keyID
        self.status = status
        self.bits = bits
        self.publicKeyPEM = publicKeyPEM
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
    }

    /// The additional data a sealed private key is bound to: its own row.
    public static func sealingContext(appID: AppID, keyID: KeyID) -> String {
        "app_keys:\(appID):\(keyID.uuid.lowercasedText)"
    }

    /// Seals `pair` for storage under `masterKey`.
    public init(appID: AppID, keyID: KeyID, status: KeyStatus, pair: RSAKeyPair, masterKey: MasterKey) throws {
        self.init(
            appID: appID, keyID: keyID, status: status, bits: pair.bits, publicKeyPEM: pair.publicKeyPEM,
            sealedPrivateKey: try masterKey.seal(
                Data(pair.privateKeyPEM.utf8), context: Self.sealingContext(appID: appID, keyID: keyID)))
    }

    /// Opens and parses the private key; throws when the master key is not the
    /// one it was sealed with.
    public func open(with masterKey: MasterKey) throws -> RSAKeyPair {
        let pem = try masterKey.open(sealedPrivateKey, context: Self.sealingContext(appID: appID, keyID: keyID))
        return try RSAKeyPair(pem: String(decoding: pem, as: UTF8.self))
    }
}
