#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GatewayCore
import NIOPosix

/// Where SMS senders may deliver. An app's admin chooses its sender's URL, so
/// by default the gateway delivers only to public addresses: a sender URL
/// cannot make it call its own network (the database, a cloud metadata
/// service, an admin port). Each send resolves the URL's host and refuses it
/// if any address is loopback, private, link-local or otherwise not public.
/// The HTTP client resolves the name again to connect, so a DNS server that
/// answers differently the second time can still get through: filter the
/// gateway's outbound traffic where that matters.
public struct SenderAddressPolicy: Sendable {
    /// Deliver to any address (`sms.allow_private_addresses`): for a sender
    /// inside the operator's own network, and for tests.
    public let allowsPrivateAddresses: Bool

    public init(allowsPrivateAddresses: Bool) {
        self.allowsPrivateAddresses = allowsPrivateAddresses
    }

    /// Ranges that are not public destinations (RFC 6890 and its updates).
    static let nonPublicRanges: [CIDR] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32",
        "fc00::/7", "fe80::/10", "ff00::/8",
    ].map { CIDR($0)! }

    static func isPublic(_ address: IPAddress) -> Bool {
        !nonPublicRanges.contains { $0.contains(address) }
    }

    /// Throws unless every address `url`'s host stands for is public (or
    /// private addresses are allowed).
    func check(_ url: URL) async throws(SMSDeliveryFailure) {
        guard !allowsPrivateAddresses else { return }
        guard let host = url.host(percentEncoded: false), !host.isEmpty else {
            throw SMSDeliveryFailure(reason: "the sender URL has no host")
        }
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else {
            do {
                addresses = try await NIOThreadPool.singleton.runIfActive { try Self.resolve(host) }
            } catch {
                throw SMSDeliveryFailure(reason: "the sender host \(host) did not resolve")
            }
        }
        guard !addresses.isEmpty, addresses.allSatisfy(Self.isPublic) else {
            throw SMSDeliveryFailure(reason: "the sender host \(host) is not a public address (sms.allow_private_addresses is off)")
        }
    }

    /// Every address `host` resolves to. Blocking: call it off the cooperative pool.
    private static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else {
            throw SMSDeliveryFailure(reason: "no address")
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch current.pointee.ai_family {
            case AF_INET:
                var address = current.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            case AF_INET6:
                var address = current.pointee.ai_addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            default:
                break
            }
            let length = text.firstIndex(of: 0) ?? 0
            if length > 0, let parsed = IPAddress(String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)) {
                addresses.append(parsed)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}
