public import GatewayCore

extension Migration {
    /// The gateway's own schema, from the top-level `Migrations/` folder.
    public static let core: [Migration] = embeddedMigrations.map {
        Migration(source: "core", name: $0.name, sql: $0.text)
    }
}
