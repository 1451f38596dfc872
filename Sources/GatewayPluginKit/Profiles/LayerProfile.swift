public import GatewayCore

/// Layer's External Identity Token v1 (``IdentityTokenClaims``), signed with
/// the app's active key: the product's first dialect, offered by every
/// deployment and every app's profile unless it lists others.
public struct LayerProfile: TokenProfile {
    public static func make(_ setup: PluginSetup) -> LayerProfile? { LayerProfile() }

    public init() {}

    public var name: String { "layer" }

    /// None: its keys and lifetime are the app's.
    public var optionFields: [OptionField] { [] }

    public func makeMinter(
        for app: AppSettings, settings: [String: JSONValue], keys: AppSigningKeys
    ) throws(GatewayError) -> any TokenMinter {
        if let unknown = settings.keys.sorted().first {
            throw .invalidRequest("token_profiles: layer has no setting '\(unknown)' (its keys and lifetime are the app's).")
        }
        let active = try keys.requireActive()
        return Minter(key: TokenSigningKey(keyID: active.keyID, signer: active.signer), providerID: app.providerID, keys: keys)
    }

    struct Minter: TokenMinter {
        let key: TokenSigningKey
        let providerID: ProviderID
        let keys: AppSigningKeys

        var keyID: KeyID? { key.keyID }

        func problems(in token: ParsedIdentityToken) -> [TokenValidationReport.Problem] {
            var checks = TokenChecks(token)
            checks.signature(keys.signed(token))
            if let issuer = token.claims["iss"]?.stringValue.flatMap(ProviderID.init), issuer != providerID {
                checks.add("wrong_iss", "The iss claim is not this app's provider id.")
            }
            return checks.problems + TokenValidationReport.layerProblems(in: token)
        }

        func mint(_ grant: TokenGrant) throws -> String {
            try key.mint(
                IdentityTokenClaims(
                    issuer: grant.app.providerID, identity: grant.identity, nonce: grant.nonce, issuedAt: grant.issuedAt,
                    lifetimeSeconds: grant.app.tokenTTLSeconds))
        }
    }
}
