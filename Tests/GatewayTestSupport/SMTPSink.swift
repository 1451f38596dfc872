import Foundation

/// Real SMTP servers on loopback (`Tests/Vendors/smtp_sink.py`: aiosmtpd),
/// whose messages Python's `email` package parses: the judge of what the
/// email channel sends.
public struct SMTPSink: Sendable {
    /// The password of the STARTTLS server's user `mailer`.
    public static let password = "smtp-secret-password"

    public let process: GatewayProcess
    /// The SMTP servers' ports by name: `starttls`, `implicit`, `plain`, `refusing`, `stalling` (smtp_sink.py says what each does).
    public let ports: [String: Int]
    /// The CA that signed the STARTTLS server's certificate for `localhost`.
    public let caFile: String

    public var control: String { "http://127.0.0.1:\(process.port)" }

    public static func with<Result: Sendable>(_ body: @Sendable (SMTPSink) async throws -> Result) async throws -> Result {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Vendors/smtp_sink.py").path
        let process = try await GatewayProcess.startHelper(python, [script])
        do {
            let servers = try await HTTPCall.send("GET", "http://127.0.0.1:\(process.port)/servers").json
            var ports: [String: Int] = [:]
            for name in ["starttls", "implicit", "plain", "refusing", "stalling"] {
                guard let port = servers[name] as? Int else { throw Failure(description: "the sink names no \(name) server") }
                ports[name] = port
            }
            guard let caFile = servers["ca"] as? String else { throw Failure(description: "the sink names no CA") }
            let sink = SMTPSink(process: process, ports: ports, caFile: caFile)
            let result = try await body(sink)
            await process.stop()
            return result
        } catch {
            await process.stop()
            throw error
        }
    }

    /// Every message accepted so far, once there are at least `count` (the sink waits for them, up to 20 s).
    public func messages(atLeast count: Int) async throws -> [[String: Any]] {
        let answer = try await HTTPCall.send("GET", "\(control)/messages?count=\(count)")
        guard let messages = (try? JSONSerialization.jsonObject(with: Data(answer.text.utf8))) as? [[String: Any]] else {
            throw Failure(description: "the sink's messages are not a list: \(answer.text)")
        }
        return messages
    }

    /// The SMTP connections each server has seen.
    public func sessions() async throws -> [String: Int] {
        let answer = try await HTTPCall.send("GET", "\(control)/sessions")
        return answer.json.compactMapValues { $0 as? Int }
    }
}

extension SMTPSink {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
