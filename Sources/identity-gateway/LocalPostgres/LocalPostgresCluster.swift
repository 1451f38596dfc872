import Foundation
import GatewayCore

/// A private PostgreSQL cluster in a folder of its own, for `dev` and for the
/// test script: created with `initdb` on first use, started and stopped with
/// `pg_ctl`, reachable on 127.0.0.1 with a generated password. Postgres
/// refuses to run as root, so under root its programs run as the `postgres`
/// system user, which then owns the cluster folder.
struct LocalPostgresCluster {
    static let user = "gateway"
    static let database = "gateway"

    /// The folder holding `pgdata/`, the password file and the server log.
    let folder: URL
    let port: Int
    /// Durability off (fsync, full-page writes): for throwaway test clusters only.
    var throwaway = false

    private var dataDirectory: URL { folder.appending(path: "pgdata") }
    private var passwordFile: URL { folder.appending(path: "postgres.password") }
    private var logFile: URL { folder.appending(path: "postgres.log") }

    /// The URL of the cluster's `gateway` database.
    func databaseURL() throws -> String {
        let password = try String(contentsOf: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return "postgres://\(Self.user):\(password)@127.0.0.1:\(port)/\(Self.database)?sslmode=disable"
    }

    /// Creates the cluster if needed, starts it, and returns the database URL.
    func start() throws -> String {
        let binaries = try Self.binaryDirectory()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: dataDirectory.appending(path: "PG_VERSION").path) {
            try initialize(binaries: binaries)
        }
        let postmasterPID = dataDirectory.appending(path: "postmaster.pid")
        if FileManager.default.fileExists(atPath: postmasterPID.path),
            (try? runAsOwner(binaries.appending(path: "pg_ctl"), ["-D", dataDirectory.path, "status"])) != nil
        {
            return try databaseURL()
        }
        var settings = [
            "-c listen_addresses=127.0.0.1", "-c port=\(port)", "-c unix_socket_directories=''",
        ]
        if throwaway {
            // Test suites start many gateways at once, each keeping its minimum of connections open, and
            // the concurrency tests run two instances with 120 requests in flight each.
            settings += ["-c fsync=off", "-c full_page_writes=off", "-c synchronous_commit=off", "-c max_connections=1000"]
        }
        do {
            try runAsOwner(
                binaries.appending(path: "pg_ctl"),
                ["-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60", "-o", settings.joined(separator: " "), "start"])
        } catch {
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw LocalPostgresError("PostgreSQL did not start (\(error)); its log ends:\n" + log.suffix(2000))
        }
        return try databaseURL()
    }

    /// Stops the cluster if it runs.
    func stop() throws {
        guard FileManager.default.fileExists(atPath: dataDirectory.appending(path: "postmaster.pid").path) else { return }
        try runAsOwner(try Self.binaryDirectory().appending(path: "pg_ctl"), ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"])
    }

    private func initialize(binaries: URL) throws {
        let password = MasterKey.generateBase64().filter { $0.isLetter || $0.isNumber }
        try Data((password + "\n").utf8).write(to: passwordFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passwordFile.path)
        if Self.isRoot {
            try ChildProcess.run("/usr/bin/chown", ["-R", "postgres:postgres", folder.path])
            guard Self.postgresUserCanReach(folder) else {
                throw LocalPostgresError(
                    "running as root, PostgreSQL runs as the 'postgres' user, which cannot reach \(folder.path)")
            }
        }
        try runAsOwner(
            binaries.appending(path: "initdb"),
            [
                "-D", dataDirectory.path, "-U", Self.user, "--pwfile", passwordFile.path, "-A", "scram-sha-256",
                "-E", "UTF8", "--locale", "C.UTF-8", "--no-instructions",
            ])
        try createDatabase(binaries: binaries)
    }

    private func createDatabase(binaries: URL) throws {
        // initdb creates only the `postgres` database; `gateway` is made in
        // single-user mode so no server has to be running for it.
        let stdin = Data("CREATE DATABASE \(Self.database);\n".utf8)
        try runAsOwner(
            binaries.appending(path: "postgres"), ["--single", "-D", dataDirectory.path, "postgres"], input: stdin)
    }

    @discardableResult
    private func runAsOwner(_ program: URL, _ arguments: [String], input: Data? = nil) throws -> String {
        if Self.isRoot {
            return try ChildProcess.run("/usr/sbin/runuser", ["-u", "postgres", "--", program.path] + arguments, input: input)
        }
        return try ChildProcess.run(program.path, arguments, input: input)
    }

    static var isRoot: Bool { geteuid() == 0 }

    /// The cluster for `folder/postgres`. Under root, when the `postgres` user
    /// cannot reach that path (a clone under /root, mode 700), the cluster
    /// lives under /var/lib/identity-gateway-dev instead, linked from `folder`.
    static func inside(_ folder: URL, port: Int) throws -> LocalPostgresCluster {
        let wanted = folder.appending(path: "postgres")
        let link = try? FileManager.default.destinationOfSymbolicLink(atPath: wanted.path)
        if let link { return LocalPostgresCluster(folder: URL(fileURLWithPath: link), port: port) }
        guard isRoot, !postgresUserCanReach(folder) else { return LocalPostgresCluster(folder: wanted, port: port) }
        let name = folder.path.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        let elsewhere = URL(fileURLWithPath: "/var/lib/identity-gateway-dev/" + String(name, radix: 16))
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: wanted, withDestinationURL: elsewhere)
        return LocalPostgresCluster(folder: elsewhere, port: port)
    }

    static func postgresUserCanReach(_ folder: URL) -> Bool {
        (try? ChildProcess.run("/usr/sbin/runuser", ["-u", "postgres", "--", "test", "-x", folder.path])) != nil
    }

    /// Where `initdb` and `pg_ctl` live: `GATEWAY_POSTGRES_BIN`, else the
    /// newest Debian install under /usr/lib/postgresql, else the PATH.
    static func binaryDirectory() throws -> URL {
        if let explicit = ProcessInfo.processInfo.environment["GATEWAY_POSTGRES_BIN"] {
            return URL(fileURLWithPath: explicit)
        }
        let debian = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: debian.path)) ?? []
        if let newest = versions.compactMap(Int.init).max() {
            return debian.appending(path: "\(newest)/bin")
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return URL(fileURLWithPath: String(directory))
        }
        throw LocalPostgresError("PostgreSQL is not installed (no initdb found); install it with: apt-get install postgresql")
    }
}

struct LocalPostgresError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
