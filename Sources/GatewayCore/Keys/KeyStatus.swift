/// Where a tenant key is in its life: published before it signs, signing,
/// then published only so tokens it signed still verify.
public enum KeyStatus: String, Sendable, Codable, CaseIterable {
    case next
    case active
    case retired
}
