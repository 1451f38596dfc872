/// The audit trail (`audit.*`).
struct AuditSettings: Sendable {
    /// false only to measure the audit trail's cost: tokens then leave unaudited.
    var enabled = true
    /// Days of audit events to keep; 0 keeps them forever.
    var retentionDays = 0

    init(_ settings: SettingsReader) {
        enabled = settings.boolean("audit.enabled", default: enabled)
        retentionDays = settings.integer("audit.retention_days", in: 0...36_500, default: retentionDays)
    }
}
