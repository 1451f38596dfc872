import Foundation
@testable import GatewayCore
#if canImport(Glibc)
import Glibc
#endif

/// Addresses in `X-Forwarded-For`, the socket peer and trusted-proxy ranges:
/// the parser accepts exactly what `inet_pton` accepts, to the same bytes (an
/// IPv4-mapped IPv6 address is its IPv4 address); an address writes itself in
/// a form that reads back the same; a range is read the same way; and the
/// resolved client is one of the addresses seen.
enum ClientAddressTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let input = text(bytes) else { return }
        let lines = input.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for line in lines {
            try checkAddress(line)
            try checkRange(line)
        }
        // The first line is the peer, the second the trusted ranges, the rest the header's values.
        guard lines.count >= 2 else { return }
        let proxies = lines[1].split(separator: ",").compactMap { CIDR($0.trimmingCharacters(in: .whitespaces)) }
        let forwarded = Array(lines.dropFirst(2))
        guard let client = ClientAddress.resolve(peer: lines[0], forwardedFor: forwarded, trustedProxies: proxies) else {
            try invariant(false, "a peer resolved to no client")
            return
        }
        let seen = [lines[0]] + forwarded.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        try invariant(
            client == lines[0] || seen.contains { IPAddress($0).map { $0.description == client } ?? false },
            "client \(client) is none of the addresses seen")
    }

    static func checkAddress(_ text: String) throws(InvariantFailure) {
        let parsed = IPAddress(text)
        let reference = systemBytes(text)
        try invariant(parsed?.bytes == reference, "\(text.debugDescription): parsed \(String(describing: parsed?.bytes)), inet_pton \(String(describing: reference))")
        if let parsed { try invariant(IPAddress(parsed.description) == parsed, "\(parsed) does not read its own text") }
    }

    static func checkRange(_ text: String) throws(InvariantFailure) {
        guard let range = CIDR(text) else { return }
        try invariant(CIDR(range.description) == range, "\(range) does not read its own text")
        try invariant(range.contains(range.network), "\(range) does not contain its own network")
    }

    /// What glibc reads `text` as, in the same shape as ``IPAddress``.
    static func systemBytes(_ text: String) -> [UInt8]? {
        var text = text
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        guard !text.utf8.contains(0) else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        return bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(bytes.suffix(4)) : bytes
    }
}
