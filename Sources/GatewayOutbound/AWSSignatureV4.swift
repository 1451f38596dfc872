import Crypto
public import Foundation

/// Signs a request to an AWS API with Signature Version 4 (AWS's "Create a
/// signed AWS API request"): the canonical request (method, path, query,
/// the signed headers, the body's SHA-256), the string to sign under the
/// day's credential scope, and a key derived from the secret for that day,
/// region and service. What it signs: `content-type`, `host`,
/// `x-amz-content-sha256` and `x-amz-date`, the headers it returns beside
/// `Authorization`; the caller sends them as they are (and no other `Host`).
public struct AWSSignatureV4: Sendable {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let region: String
    public let service: String

    public init(accessKeyID: String, secretAccessKey: String, region: String, service: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
    }

    /// The headers that sign a `method` request of `body` to `url` at `now`,
    /// `Authorization` among them. `url` has no query.
    public func headers(
        method: String, url: URL, contentType: String, body: [UInt8], now: Date
    ) -> [(name: String, value: String)] {
        let (day, instant) = Self.timestamps(now)
        let bodyHash = Self.hex(SHA256.hash(data: body))
        let signed: [(name: String, value: String)] = [
            ("content-type", contentType), ("host", Self.hostHeader(url)), ("x-amz-content-sha256", bodyHash),
            ("x-amz-date", instant),
        ]
        let signedNames = signed.map(\.name).joined(separator: ";")
        let canonicalRequest = [
            method, Self.canonicalPath(url.path), "",
            signed.map { "\($0.name):\($0.value)\n" }.joined(), signedNames, bodyHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", instant, scope, Self.hex(SHA256.hash(data: Array(canonicalRequest.utf8))),
        ].joined(separator: "\n")
        var key = SymmetricKey(data: Array("AWS4\(secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
        return signed.filter { $0.name != "host" } + [
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)"
            )
        ]
    }

    /// `Host` as an HTTP client sends it: the name, and the port where it is not the scheme's own.
    static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, port != (url.scheme == "https" ? 443 : 80) else { return host }
        return "\(host):\(port)"
    }

    /// Each segment percent-encoded but for the unreserved characters (RFC 3986), `/` kept.
    static func canonicalPath(_ path: String) -> String {
        guard !path.isEmpty else { return "/" }
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? String($0) }
            .joined(separator: "/")
    }

    /// `20261206` and `20261206T201500Z`, in UTC.
    static func timestamps(_ now: Date) -> (day: String, instant: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let day = String(format: "%04d", parts.year ?? 0) + two(parts.month) + two(parts.day)
        return (day, day + "T" + two(parts.hour) + two(parts.minute) + two(parts.second) + "Z")
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
