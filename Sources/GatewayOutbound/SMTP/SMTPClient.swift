import Foundation
import GatewayCore
import NIOCore
import NIOSSL
import Synchronization

/// Hands messages to SMTP servers under the gateway's outbound rules: only
/// to an address the policy allows (``OutboundAddressPolicy``: public
/// addresses, resolved once and connected to as checked) and, unless the
/// operator allows private addresses, only on a submission port
/// (``SMTPSettings/submissionPorts``); certificates verified against the
/// system's roots (and the operator's extra ones) for the host's name; one
/// timeout over each message's whole exchange. Connections are kept for the
/// next message to the same server with the same settings (at most
/// ``maximumIdle`` each, for ``idleLifetime``), checked with RSET before
/// reuse.
public final class SMTPClient: Sendable {
    public static let maximumIdle = 16
    public static let idleLifetime = Duration.seconds(30)

    private let addresses: OutboundAddressPolicy
    private let tls: NIOSSLContext
    private let idle = Mutex<[SMTPSettings: [(connection: SMTPConnection, since: ContinuousClock.Instant)]]>([:])

    /// - Parameter extraTrustRoots: a PEM file of CAs trusted beside the
    ///   system's (an operator's own mail relay's CA).
    public init(addresses: OutboundAddressPolicy, extraTrustRoots: String? = nil) throws {
        self.addresses = addresses
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let extraTrustRoots { configuration.additionalTrustRoots = [.file(extraTrustRoots)] }
        self.tls = try NIOSSLContext(configuration: configuration)
    }

    /// Hands `envelope` over; the server's acceptance, or why not. `subject`
    /// (the app) bounds the name lookups one app may hold.
    public func send(_ envelope: SMTPEnvelope, with settings: SMTPSettings, for subject: String) async -> Result<SMTPReply, SMTPFailure> {
        do {
            return .success(try await hand(envelope, with: settings, for: subject))
        } catch {
            return .failure(error)
        }
    }

    /// Within one `settings.timeout` in all: a kept connection that turns
    /// out closed leaves the new one only the time that is left.
    private func hand(_ envelope: SMTPEnvelope, with settings: SMTPSettings, for subject: String) async throws(SMTPFailure) -> SMTPReply {
        let started = ContinuousClock.now
        if let kept = takeIdle(for: settings) {
            do {
                let reply = try await kept.withDeadline(settings.timeout) { () async throws(SMTPFailure) in
                    try await kept.reset()
                    return try await kept.send(envelope)
                }
                keep(kept)
                return reply
            } catch where error.kind == .noConnection {
                // A kept connection the server closed meanwhile: the message goes on a new one.
                kept.close()
            } catch {
                kept.close()
                throw error
            }
        }
        let address = try await destination(of: settings, for: subject)
        let left = settings.timeout - (ContinuousClock.now - started)
        guard left > .zero else { throw SMTPFailure(.timedOut, "the SMTP exchange took longer than its timeout") }
        let connection = try await SMTPConnection.open(settings, at: address, tls: tls, within: left)
        do {
            let left = settings.timeout - (ContinuousClock.now - started)
            let reply = try await connection.withDeadline(max(left, .milliseconds(1))) { () async throws(SMTPFailure) in
                try await connection.send(envelope)
            }
            keep(connection)
            return reply
        } catch {
            connection.close()
            throw error
        }
    }

    /// Closes every kept connection (the gateway stops).
    public func closeAll() {
        let all = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle.values.flatMap { $0.map(\.connection) }
        }
        for connection in all { connection.close() }
    }

    private func destination(of settings: SMTPSettings, for subject: String) async throws(SMTPFailure) -> IPAddress? {
        guard addresses.allowsPrivateAddresses || SMTPSettings.submissionPorts.contains(settings.port) else {
            throw SMTPFailure(.addressRefused, "port \(settings.port) is not an SMTP submission port (25, 465, 587, 2525)")
        }
        let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        guard let url = URL(string: "smtp://\(host):\(settings.port)") else {
            throw SMTPFailure(.addressRefused, "the host is not a name or an address")
        }
        do {
            return try await addresses.destination(of: url, for: subject)
        } catch {
            throw SMTPFailure(error.kind == .addressRefused ? .addressRefused : .noConnection, error.reason)
        }
    }

    private func takeIdle(for settings: SMTPSettings) -> SMTPConnection? {
        let now = ContinuousClock.now
        let (fresh, stale) = idle.withLock { idle -> (SMTPConnection?, [SMTPConnection]) in
            var kept = idle[settings] ?? []
            var stale: [SMTPConnection] = []
            while let last = kept.popLast() {
                if now - last.since < Self.idleLifetime, last.connection.channel.isActive {
                    idle[settings] = kept
                    return (last.connection, stale)
                }
                stale.append(last.connection)
            }
            idle[settings] = nil
            return (nil, stale)
        }
        for connection in stale { connection.close() }
        return fresh
    }

    private func keep(_ connection: SMTPConnection) {
        let kept = idle.withLock { idle -> Bool in
            guard (idle[connection.settings]?.count ?? 0) < Self.maximumIdle else { return false }
            idle[connection.settings, default: []].append((connection, ContinuousClock.now))
            return true
        }
        if !kept { connection.close() }
    }
}
