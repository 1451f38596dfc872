import Foundation

/// Which address a request comes from, for per-IP limits and the audit
/// trail: the socket peer, unless the peer is a trusted proxy, in which case
/// the nearest address in `X-Forwarded-For` that is not a trusted proxy
/// (walking from the right, the hop closest to us). A header from an
/// untrusted peer is never believed.
public enum ClientAddress {
    public static func resolve(peer: String?, forwardedFor: [String], trustedProxies: [CIDR]) -> String? {
        guard let peer else { return nil }
        // The socket's own text of an IPv4 peer is already the canonical
        // form, and with no proxy to trust there is nothing to look up.
        if trustedProxies.isEmpty, IPAddress.isDottedQuad(peer) { return peer }
        guard let peerAddress = IPAddress(peer) else { return peer }
        guard trustedProxies.contains(where: { $0.contains(peerAddress) }) else { return peerAddress.description }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var nearest = peerAddress
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { break }
            nearest = address
            if !trustedProxies.contains(where: { $0.contains(address) }) { break }
        }
        return nearest.description
    }

    /// Whether the socket peer is one of the trusted proxies, whose headers about the client are believed.
    public static func isTrustedProxy(peer: String?, trustedProxies: [CIDR]) -> Bool {
        guard !trustedProxies.isEmpty, let peer, let address = IPAddress(peer) else { return false }
        return trustedProxies.contains { $0.contains(address) }
    }
}

/// An IPv4 or IPv6 address as bytes.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// 4 bytes (IPv4) or 16 (IPv6).
    init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16)
        self.bytes = bytes
    }

    public init?(_ text: some StringProtocol) {
        var text = String(text)
        if text.hasPrefix("["), text.hasSuffix("]"), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        if let v4 = Self.parseIPv4(text) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(text) {
            // An IPv4-mapped IPv6 address is the IPv4 address.
            bytes = v6.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(v6.suffix(4)) : v6
        } else {
            return nil
        }
    }

    /// The IPv4 address an IPv6 address carries in a form that reaches it:
    /// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
    /// (`2002:AABB:CCDD::`); nil for others (IPv4-mapped ones are parsed as
    /// IPv4 already).
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        if bytes.prefix(12).allSatisfy({ $0 == 0 }) || bytes.prefix(12) == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] {
            return IPAddress(bytes: Array(bytes.suffix(4)))
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDecimalDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) {
            groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
        }
        return groups.joined(separator: ":")
    }

    /// Whether `text` is an IPv4 address exactly as ``description`` writes
    /// it: four decimal numbers up to 255, no leading zeros.
    public static func isDottedQuad(_ text: String) -> Bool {
        var parts = 0
        var value = 0
        var digits = 0
        var leadingZero = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0 else { return false }
                parts += 1
                (value, digits, leadingZero) = (0, 0, false)
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard !leadingZero else { return false }
                leadingZero = digits == 0 && byte == UInt8(ascii: "0")
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                guard value <= 255 else { return false }
            } else {
                return false
            }
        }
        return parts == 3 && digits > 0
    }

    private static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // Decimal digits only, no leading zero: what inet_pton reads, and no octal ambiguity.
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy(isDecimalDigit),
                part.utf8.count == 1 || part.utf8.first != UInt8(ascii: "0"), let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseIPv6(_ text: String) -> [UInt8]? {
        guard text.contains(":"), text.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        /// The groups of one side of "::"; a dotted quad may only end the whole address.
        func groups(_ part: String, endsAddress: Bool) -> [UInt8]? {
            if part.isEmpty { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if endsAddress, index == pieces.count - 1, piece.contains("."), let v4 = parseIPv4(String(piece)) {
                    bytes += v4
                } else {
                    guard (1...4).contains(piece.utf8.count), piece.utf8.allSatisfy(Self.isHexDigit),
                        let value = UInt16(piece, radix: 16)
                    else { return nil }
                    bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
            return bytes
        }
        guard let head = groups(halves[0], endsAddress: halves.count == 1) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1], endsAddress: true), head.count + tail.count < 16 else { return nil }
        return head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

/// An address range such as `10.0.0.0/8` or `fd00::/8`.
public struct CIDR: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let network = IPAddress(parts[0]) else { return nil }
        let maximum = network.bytes.count * 8
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy(isDecimalDigit),
                let length = Int(parts[1]), (0...maximum).contains(length)
            else { return nil }
            prefixLength = length
        } else {
            prefixLength = maximum
        }
        self.network = network
    }

    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var bitsLeft = prefixLength
        for (mine, theirs) in zip(network.bytes, address.bytes) where bitsLeft > 0 {
            let mask: UInt8 = bitsLeft >= 8 ? 0xFF : ~(0xFF >> UInt8(bitsLeft))
            guard mine & mask == theirs & mask else { return false }
            bitsLeft -= 8
        }
        return true
    }

    public var description: String { "\(network)/\(prefixLength)" }

    /// The range of `prefixLength` bits that holds `address` (its host bits cleared).
    public init(covering address: IPAddress, prefixLength: Int) {
        let length = min(max(prefixLength, 0), address.bytes.count * 8)
        var bitsLeft = length
        var bytes = address.bytes
        for index in bytes.indices {
            let mask: UInt8 = bitsLeft >= 8 ? 0xFF : bitsLeft <= 0 ? 0 : ~(0xFF >> UInt8(bitsLeft))
            bytes[index] &= mask
            bitsLeft -= 8
        }
        self.network = IPAddress(bytes: bytes)
        self.prefixLength = length
    }
}

/// `0` to `9` and nothing else: Swift's integer parsing would also take a sign.
private func isDecimalDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
}
