import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import Testing

/// Migrations expand, then contract (MigrationReview, CONTRIBUTING.md
/// "Migrations"): every file since the rule only adds, or says what it
/// contracts, so the previous release's replicas serve the database through
/// a rolling upgrade and its roll-back. Read from the files as committed.
@Suite struct MigrationRuleTests {
    /// Each plugin folder with migrations, by the source its plugin records them under.
    static let pluginSources = [
        "EmailCode": "email_code", "IDToken": "id_token", "Passkey": "passkey", "Password": "password", "PhoneCode": "phone_code",
    ]

    static func committed() throws -> [Migration] {
        var folders = [("core", Repository.path("Migrations"))]
        let plugins = Repository.path("Plugins")
        for plugin in try FileManager.default.contentsOfDirectory(atPath: plugins).sorted() {
            let folder = "\(plugins)/\(plugin)/Migrations"
            guard FileManager.default.fileExists(atPath: folder) else { continue }
            let source = try #require(pluginSources[plugin], "Plugins/\(plugin)/Migrations: add its source to pluginSources")
            folders.append((source, folder))
        }
        return try folders.flatMap { source, folder in
            try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.sorted().map {
                Migration(source: source, name: $0, sql: try String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8))
            }
        }
    }

    @Test func everyMigrationSinceTheRuleOnlyExpandsOrSaysWhatItContracts() throws {
        let migrations = try Self.committed()
        #expect(migrations.count >= 30)
        let findings = migrations.filter { MigrationReview.isUnderTheRule($0) && !MigrationReview.isContraction($0) }
            .flatMap(MigrationReview.findings(in:))
        #expect(findings.isEmpty, "\(findings.map(\.description).joined(separator: "\n"))")
    }

    @Test func theRuleStartsAfterFilesThatExist() throws {
        let names = Set(try Self.committed().map { "\($0.source)/\($0.name)" })
        for (source, last) in MigrationReview.writtenBeforeTheRule {
            #expect(names.contains("\(source)/\(last)"), "\(source)/\(last)")
        }
        #expect(Set(MigrationReview.writtenBeforeTheRule.keys) == Set(Self.pluginSources.values).union(["core"]))
    }

    static let contractions: [(sql: String, problem: String)] = [
        ("DROP TABLE sessions;", "drops"),
        ("ALTER TABLE sessions DROP COLUMN device_label;", "drops"),
        ("alter table sessions\n  rename column device_label to device;", "renames"),
        ("ALTER TABLE apps RENAME TO tenants;", "renames"),
        ("ALTER TABLE sessions ALTER COLUMN generation TYPE numeric;", "type"),
        ("ALTER TABLE sessions ALTER COLUMN device_label SET NOT NULL;", "NOT NULL"),
        ("ALTER TABLE sessions ADD COLUMN region text NOT NULL;", "NOT NULL"),
        ("CREATE INDEX sessions_by_label ON sessions (device_label);", "CONCURRENTLY"),
        ("CREATE UNIQUE INDEX IF NOT EXISTS apps_by_name ON apps (name);", "CONCURRENTLY"),
        ("TRUNCATE audit_events;", "empties"),
    ]

    @Test(arguments: contractions.indices)
    func aMadeUpContractionIsFound(_ index: Int) {
        let (sql, problem) = Self.contractions[index]
        let migration = Migration(source: "core", name: "9999_made_up.sql", sql: "-- a change\n" + sql)
        #expect(MigrationReview.isUnderTheRule(migration))
        let findings = MigrationReview.findings(in: migration)
        #expect(findings.count == 1 && findings[0].problem.contains(problem), "\(findings)")
        #expect(!MigrationReview.expandsOnly(migration))
    }

    @Test func whatOnlyAddsPasses() {
        let migration = Migration(
            source: "core", name: "9999_made_up.sql",
            sql: """
                CREATE TABLE notes (app_id uuid NOT NULL, body text NOT NULL);
                CREATE INDEX notes_by_app ON notes (app_id);
                ALTER TABLE sessions ADD COLUMN region text;
                ALTER TABLE sessions ADD COLUMN tries int NOT NULL DEFAULT 0;
                ALTER TABLE sessions ALTER COLUMN device_label DROP NOT NULL;
                UPDATE sessions SET region = 'eu' WHERE region IS NULL;
                CREATE OR REPLACE FUNCTION noop() RETURNS void LANGUAGE sql AS $$ SELECT 1 $$;
                """)
        #expect(MigrationReview.findings(in: migration) == [])
        #expect(MigrationReview.expandsOnly(migration))
        let concurrent = Migration(
            source: "core", name: "9999_made_up.sql",
            sql: "\(MigrationReview.outsideATransactionMarker)\nCREATE INDEX CONCURRENTLY IF NOT EXISTS sessions_by_region ON sessions (region);")
        #expect(MigrationReview.findings(in: concurrent) == [])
        #expect(MigrationReview.runsOutsideATransaction(concurrent))
    }

    @Test func aMarkedContractionPassesTheLintButIsRecordedAsOne() {
        let migration = Migration(
            source: "core", name: "9999_made_up.sql",
            sql: "\(MigrationReview.contractionMarker) sessions.device_label, unread since the release after 0019\n"
                + "ALTER TABLE sessions DROP COLUMN device_label;")
        #expect(MigrationReview.isContraction(migration))
        #expect(!MigrationReview.expandsOnly(migration))
    }
}
