import GatewayCore

/// The deployment's secrets: the master key (with the one being retired)
/// and the operator token seeded on an empty database.
struct SecretSettings: Sendable {
    /// Required by `serve`; `migrate` needs none.
    var masterKey: MasterKey?
    /// Seeds one operator token on a database that has none.
    var bootstrapAdminToken: AdminTokenSecret?

    init(_ settings: SettingsReader) {
        let masterKeyText = settings.secret("master_key")
        if let masterKeyText {
            do { masterKey = try MasterKey(base64: masterKeyText) } catch { settings.note("master_key", error.message) }
        }
        if let previousText = settings.secret("master_key_previous") {
            do {
                let previous = try MasterKey(base64: previousText)
                if let current = masterKey {
                    masterKey = current.addingPrevious(previous)
                } else if masterKeyText == nil {
                    settings.noteLine(
                        SettingsReader.label("master_key_previous")
                            + " is only read with master_key set: it is the key being retired")
                }
            } catch {
                settings.note("master_key_previous", error.message)
            }
        }
        if let text = settings.secret("admin.bootstrap_token") {
            let secret = AdminTokenSecret(text: text)
            if secret.isWellFormed { bootstrapAdminToken = secret } else {
                settings.note("admin.bootstrap_token", "must be 32 to 512 visible ASCII characters")
            }
        }
    }
}
