public import Foundation

/// What the client keeps of a session between launches. The refresh token
/// is a secret: a store keeps it where only this app (and the extensions
/// it shares it with) can read it.
public struct StoredSession: Codable, Hashable, Sendable {
    /// The app the session is of.
    public var appID: String
    /// The session's id.
    public var sessionID: String
    /// The user the app named at sign-in, or the one the token names.
    public var userID: String?
    /// The live refresh token (`rt1.`...): spent by the next refresh.
    public var refreshToken: String
    /// When the refresh token stops working unless used.
    public var refreshTokenExpiresAt: Date

    /// A session from its parts (a store reads it back with `Codable`).
    public init(appID: String, sessionID: String, userID: String?, refreshToken: String, refreshTokenExpiresAt: Date) {
        self.appID = appID
        self.sessionID = sessionID
        self.userID = userID
        self.refreshToken = refreshToken
        self.refreshTokenExpiresAt = refreshTokenExpiresAt
    }
}

/// Where the session lives between launches. The client reads it before
/// every refresh and writes the successor before it returns a token, so
/// clients in several processes over one store (an app and its widget)
/// continue one session instead of spending each other's tokens: a
/// successor replaces only the token it was minted for, never a newer one
/// another process stored meanwhile.
public protocol SessionStore: Sendable {
    /// The stored session, or `nil`.
    func load() async throws -> StoredSession?
    /// Stores `session` in place of the stored one, but only while the
    /// stored one holds the refresh token `expected` (`nil`: whatever is
    /// stored, or nothing). Returns false, storing nothing, when it holds
    /// another by then.
    func save(_ session: StoredSession, replacing expected: String?) async throws -> Bool
    /// Removes the stored session, but only while it holds the refresh
    /// token `refreshToken` (so a client whose token was refused does not
    /// remove the successor another process stored meanwhile); `nil`
    /// removes whatever is stored.
    func remove(ifHolding refreshToken: String?) async throws
    /// Runs `refresh` while no other client over this store runs one, in
    /// this process or another: two processes that each read a token and
    /// refreshed it in turn could otherwise leave one of them presenting a
    /// token two refreshes old, which the gateway takes for a stolen one.
    /// The default runs it at once, for a store no other process shares.
    func exclusively<T: Sendable>(_ refresh: @Sendable () async throws -> T) async throws -> T
}

extension SessionStore {
    public func exclusively<T: Sendable>(_ refresh: @Sendable () async throws -> T) async throws -> T {
        try await refresh()
    }
}

/// A store in memory, for tests and for apps that keep no session between launches.
public actor MemorySessionStore: SessionStore {
    private var session: StoredSession?

    /// A store holding `session`, or nothing.
    public init(_ session: StoredSession? = nil) {
        self.session = session
    }

    public func load() -> StoredSession? { session }

    public func save(_ session: StoredSession, replacing expected: String?) -> Bool {
        guard expected == nil || self.session?.refreshToken == expected else { return false }
        self.session = session
        return true
    }

    public func remove(ifHolding refreshToken: String?) {
        if refreshToken == nil || session?.refreshToken == refreshToken { session = nil }
    }
}

/// A store in one file only its owner may read (mode 0600, in a folder of
/// mode 0700 it creates), written whole to a temporary file and renamed
/// over the old one, so a reader never sees half a session. A change
/// (compare, then write or remove) and a whole refresh
/// (``exclusively(_:)``) each hold an exclusive `flock` on a lock file
/// beside it, so processes sharing the file take turns. For Linux and
/// command-line tools; on Apple platforms use ``KeychainSessionStore``.
public actor FileSessionStore: SessionStore {
    /// The session's file.
    public let url: URL
    private let refreshLock: ProcessLock

    /// A store in the file `url` (created with its folder on the first save).
    public init(url: URL) {
        self.url = url
        self.refreshLock = ProcessLock(url: url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).refresh"))
    }

    public func exclusively<T: Sendable>(_ refresh: @Sendable () async throws -> T) async throws -> T {
        try await refreshLock.holding(refresh)
    }

    public func load() throws -> StoredSession? {
        guard let data = try read() else { return nil }
        return try JSONDecoder.sessions.decode(StoredSession.self, from: data)
    }

    public func save(_ session: StoredSession, replacing expected: String?) throws -> Bool {
        try changing {
            if let expected, try load()?.refreshToken != expected { return false }
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
            let data = try JSONEncoder.sessions.encode(session)
            guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
            else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
            }
            guard rename(temporary.path, url.path) == 0 else {
                let code = errno
                try? FileManager.default.removeItem(at: temporary)
                throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            }
            return true
        }
    }

    public func remove(ifHolding refreshToken: String?) throws {
        try changing {
            if let refreshToken, try load()?.refreshToken != refreshToken { return }
            guard unlink(url.path) == 0 || errno == ENOENT else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }

    private func read() throws -> Data? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            // Removed between the check and the read.
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw error
        }
    }

    /// Runs `change` holding the lock file's exclusive lock (creating the folder first).
    private func changing<T>(_ change: () throws -> T) throws -> T {
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let lock = open(folder.appendingPathComponent(".\(url.lastPathComponent).lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        return try change()
    }
}

extension JSONEncoder {
    static let sessions: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}

extension JSONDecoder {
    static let sessions: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
