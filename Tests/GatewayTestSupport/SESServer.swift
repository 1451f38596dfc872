import Foundation

/// Amazon SES v2 as moto serves it (Tests/Vendors/ses_server.py), checking
/// every request's SigV4 signature, with what it accepted read back by
/// boto3 and Python's `email` package: the judge of the `ses` sender.
public struct SESServer: Sendable {
    public let process: GatewayProcess
    /// moto's address, its region, an access key that may send, and the verified sender.
    public let endpoint: String
    public let region: String
    public let accessKeyID: String
    public let secretAccessKey: String
    public let from: String

    public var control: String { "http://127.0.0.1:\(process.port)" }

    public static func with<Result: Sendable>(_ body: @Sendable (SESServer) async throws -> Result) async throws -> Result {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Vendors/ses_server.py").path
        let process = try await GatewayProcess.startHelper(python, [script])
        do {
            let setup = try await HTTPCall.send("GET", "http://127.0.0.1:\(process.port)/setup").json
            func field(_ name: String) throws -> String {
                guard let value = setup[name] as? String else { throw Failure(description: "the SES server names no \(name)") }
                return value
            }
            let server = SESServer(
                process: process, endpoint: try field("endpoint"), region: try field("region"),
                accessKeyID: try field("access_key_id"), secretAccessKey: try field("secret_access_key"), from: try field("from"))
            let result = try await body(server)
            await process.stop()
            return result
        } catch {
            await process.stop()
            throw error
        }
    }

    /// What moto holds once it has `count` messages (it waits up to 20 s):
    /// each message parsed, and how many recipients boto3's `get_send_quota` counts.
    public func messages(atLeast count: Int) async throws -> (sentByBoto3: Int, messages: [[String: Any]]) {
        let answer = try await HTTPCall.send("GET", "\(control)/messages?count=\(count)").json
        guard let messages = answer["messages"] as? [[String: Any]], let sent = answer["sent_by_boto3"] as? Double else {
            throw Failure(description: "the SES server's answer is not what it should be: \(answer)")
        }
        return (Int(sent), messages)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
