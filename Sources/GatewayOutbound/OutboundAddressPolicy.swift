#if canImport(Glibc)
import Glibc
#endif
public import Foundation
public import GatewayCore
import Synchronization

/// Where the gateway may call out to (an SMS sender, a tenant's webhook). An
/// app's admin chooses those URLs, so by default the gateway calls only
/// public addresses: a URL cannot make it call its own network (the
/// database, a cloud metadata service, an admin port). Each call resolves
/// the URL's host, refuses it if
/// any address is loopback, private, link-local or otherwise not public, and
/// names the address it checked as the one to connect to
/// (``destination(of:)``), so a DNS server that answers differently the
/// second time cannot redirect the connection. A host written as a number
/// that is not a canonical dotted quad (`012.1.2.3`, `127.1`, `0x7f.1`,
/// `2130706433`) is refused outright: resolvers read such forms differently
/// (`012` is octal 10 to glibc), so no check of them can be trusted.
public struct OutboundAddressPolicy: Sendable {
    /// Every address a host name stands for.
    public typealias Resolver = HostLookups.Resolver

    /// Call any address (the plugin's `*.allow_private_addresses` setting):
    /// for a service inside the operator's own network, and for tests.
    public let allowsPrivateAddresses: Bool
    /// Bounded, shared and remembered name lookups.
    private let lookups: HostLookups
    /// What counts as not public; tests narrow it to stay on loopback.
    private let blockedRanges: [CIDR]
    /// Hosts whose every address passed, with the one to connect to, for
    /// ``ResolvedHosts/lifetime``: a login does not wait for DNS each time,
    /// and the address connected to is still one that was checked.
    private let resolvedHosts = ResolvedHosts()

    public init(allowsPrivateAddresses: Bool, resolve: Resolver? = nil) {
        self.init(allowsPrivateAddresses: allowsPrivateAddresses, resolve: resolve, blockedRanges: Self.nonPublicRanges)
    }

    /// `blockedRanges` replaces what counts as not public (tests stay on loopback this way).
    public init(allowsPrivateAddresses: Bool, resolve: Resolver?, blockedRanges: [CIDR]) {
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.lookups = resolve.map { HostLookups(resolve: $0) } ?? .system
        self.blockedRanges = blockedRanges
    }

    /// Ranges that are not public destinations (RFC 6890 and its updates),
    /// with the IPv6 forms that carry an IPv4 address or reach one through a
    /// translator or relay: IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/96`,
    /// `64:ff9b:1::/48`), 6to4 (`2002::/16`), Teredo and the other IETF
    /// assignments (`2001::/23`), and the old site-local `fec0::/10`.
    public static let nonPublicRanges: [CIDR] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4", "::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
        "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    ].map { CIDR($0)! }

    /// Whether `address` is outside `ranges`, and so is any IPv4 address it carries.
    public static func isPublic(_ address: IPAddress, notIn ranges: [CIDR] = nonPublicRanges) -> Bool {
        guard !ranges.contains(where: { $0.contains(address) }) else { return false }
        return address.embeddedIPv4.map { isPublic($0, notIn: ranges) } ?? true
    }

    private func mayReach(_ address: IPAddress) -> Bool {
        allowsPrivateAddresses || Self.isPublic(address, notIn: blockedRanges)
    }

    /// Whether `host` reads as an IPv4 number in some resolver's eyes (its
    /// last label is decimal digits, or `0x` and hex digits: the WHATWG URL
    /// "ends in a number" rule) without being the canonical dotted quad.
    public static func isAmbiguousNumber(_ host: String) -> Bool {
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard let last = labels.last?.lowercased() else { return false }
        let numeric =
            (!last.isEmpty && last.allSatisfy(\.isASCII) && last.allSatisfy(\.isNumber))
            || (last.hasPrefix("0x") && last.dropFirst(2).allSatisfy(\.isHexDigit))
        return numeric && !IPAddress.isDottedQuad(host)
    }

    /// The 400 for a URL at `field` whose host is an ambiguous number; nil when it is fine.
    public static func refusal(of url: URL, field: String) -> GatewayError? {
        guard let host = url.host(percentEncoded: false), isAmbiguousNumber(host) else { return nil }
        return .invalidRequest("\(field): the host \(host) must be a name or a canonical address (like 203.0.113.7).")
    }

    /// Throws unless every address `url`'s host stands for may be reached;
    /// returns the checked address to connect to, or nil for a literal host
    /// (the client connects to it as written). `subject` (the app the call is
    /// for) bounds how many name lookups one app may hold (``HostLookups``).
    public func destination(of url: URL, for subject: String) async throws(OutboundFailure) -> IPAddress? {
        guard let host = url.host(percentEncoded: false), !host.isEmpty else {
            throw OutboundFailure(.addressRefused, "the URL has no host")
        }
        guard !Self.isAmbiguousNumber(host) else {
            throw OutboundFailure(.addressRefused, "the host \(host) is a number but not a canonical address")
        }
        if let literal = IPAddress(host) {
            guard mayReach(literal) else {
                throw OutboundFailure(.addressRefused, "the host \(host) is not a public address (private addresses are off)")
            }
            return nil
        }
        if let address = resolvedHosts.address(of: host) { return address }
        let addresses = try await lookups.addresses(of: host, for: subject)
        guard let first = addresses.first, addresses.allSatisfy(mayReach) else {
            throw OutboundFailure(.addressRefused, "the host \(host) is not a public address (private addresses are off)")
        }
        resolvedHosts.remember(first, for: host)
        return first
    }

    /// Every address `host` resolves to. Blocking: call it off the cooperative pool.
    static func systemResolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else {
            throw OutboundFailure(.noAnswer, "no address")
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

/// Host names resolved to addresses that all passed the policy, each kept
/// for ``lifetime`` (refusals are not kept: they are asked again). At most
/// ``capacity`` names; past that the oldest half is forgotten.
final class ResolvedHosts: Sendable {
    static let lifetime = Duration.seconds(30)
    static let capacity = 1024

    private let entries = Mutex<[String: (address: IPAddress, until: ContinuousClock.Instant)]>([:])

    func address(of host: String) -> IPAddress? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[host] else { return nil }
            guard entry.until > now else {
                entries[host] = nil
                return nil
            }
            return entry.address
        }
    }

    func remember(_ address: IPAddress, for host: String) {
        let until = ContinuousClock.now + Self.lifetime
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                for (name, _) in entries.sorted(by: { $0.value.until < $1.value.until }).prefix(Self.capacity / 2) {
                    entries[name] = nil
                }
            }
            entries[host] = (address, until)
        }
    }
}
