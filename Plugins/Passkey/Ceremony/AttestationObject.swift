/// What a registration's authenticator returns (WebAuthn Level 3, §6.5):
/// the attestation statement's format, the statement, and the
/// authenticator data with the new credential.
///
/// The policy (docs/plugins.md, "Passkeys"): format `none` with an empty statement
/// is what passkey providers send when asked for no attestation, as the
/// gateway asks. A statement of another registered format (`packed`,
/// `tpm`, `android-key`, `android-safetynet`, `fido-u2f`, `apple`) is
/// accepted but not verified: the gateway trusts no authenticator maker's
/// certificate, so the credential is as trusted as one with `none`, and its
/// format is kept for the operator to see. Any other format is refused.
public struct AttestationObject: Sendable {
    public static let formats: Set<String> = ["none", "packed", "tpm", "android-key", "android-safetynet", "fido-u2f", "apple"]
    /// Certificate chains of the unverified formats fit; more is refused.
    public static let maximumBytes = 16 * 1024

    public let format: String
    public let authenticatorData: AuthenticatorData

    public init(bytes: [UInt8]) throws(PasskeyRefusal) {
        guard bytes.count <= Self.maximumBytes else { throw .malformed }
        let object: CBORValue
        do {
            object = try CBORReader().read(bytes)
        } catch {
            throw .malformed
        }
        guard case .map(let entries) = object, entries.count == 3, let format = object[text: "fmt"]?.textValue,
            case .map(let statement)? = object[text: "attStmt"], let dataBytes = object[text: "authData"]?.bytesValue
        else { throw .malformed }
        guard Self.formats.contains(format), format != "none" || statement.isEmpty else { throw .attestation }
        do {
            authenticatorData = try AuthenticatorData(bytes: dataBytes)
        } catch {
            throw .malformed
        }
        self.format = format
    }
}
