import Foundation
import GatewayCore
import GatewayOutbound
import Synchronization
import Testing

/// Where the gateway may call out to: public addresses only, unless allowed.
@Suite struct OutboundAddressPolicyTests {
    @Test(arguments: [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
    ])
    func privateAndSpecialAddressesAreNotPublic(_ text: String) throws {
        #expect(!OutboundAddressPolicy.isPublic(try #require(IPAddress(text))))
    }

    /// IPv6 forms that carry or reach an IPv4 address, and the old site-local range.
    @Test(arguments: [
        "::a9fe:a9fe", "[::a9fe:a9fe]", "::7f00:1", "::808:808", "64:ff9b::a9fe:a9fe", "64:ff9b:1::a9fe:a9fe",
        "2002:a9fe:a9fe::1", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "fec0::1", "::ffff:0:7f00:1",
    ])
    func ipv6FormsThatReachIPv4AreNotPublic(_ text: String) throws {
        #expect(!OutboundAddressPolicy.isPublic(try #require(IPAddress(text))))
    }

    /// Where a narrower list leaves such a form out, the IPv4 address it carries still decides.
    @Test func anEmbeddedIPv4AddressIsJudgedByItself() throws {
        let onlyIPv4 = OutboundAddressPolicy.nonPublicRanges.filter { $0.network.bytes.count == 4 }
        #expect(!OutboundAddressPolicy.isPublic(try #require(IPAddress("::a9fe:a9fe")), notIn: onlyIPv4))
        #expect(!OutboundAddressPolicy.isPublic(try #require(IPAddress("2002:0a00:0001::1")), notIn: onlyIPv4))
        #expect(OutboundAddressPolicy.isPublic(try #require(IPAddress("2002:0808:0808::1")), notIn: onlyIPv4))
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
    func publicAddressesArePublic(_ text: String) throws {
        #expect(OutboundAddressPolicy.isPublic(try #require(IPAddress(text))))
    }

    @Test func aCallChecksTheHostByAddressOrName() async throws {
        let publicOnly = OutboundAddressPolicy(allowsPrivateAddresses: false)
        for url in ["http://127.0.0.1:9/sms", "https://[::1]/sms", "http://localhost:8080/", "http://169.254.169.254/latest"] {
            let failure = await #expect(throws: OutboundFailure.self, "\(url)") { try await publicOnly.destination(of: URL(string: url)!, for: "app") }
            #expect(failure?.kind == .addressRefused)
        }
        // A public address is let through without any lookup, and the client connects to it as written.
        #expect(try await publicOnly.destination(of: URL(string: "https://8.8.8.8/sms")!, for: "app") == nil)
        #expect(try await OutboundAddressPolicy(allowsPrivateAddresses: true).destination(of: URL(string: "http://127.0.0.1:9/sms")!, for: "app") == nil)
    }

    /// A name whose addresses passed is not resolved again for a while; one
    /// that was refused is asked again each time.
    @Test func aCheckedNameIsKeptAndARefusedOneIsNot() async throws {
        let lookups = Mutex<[String]>([])
        let policy = OutboundAddressPolicy(
            allowsPrivateAddresses: false,
            resolve: { host in
                lookups.withLock { $0.append(host) }
                return [try #require(IPAddress(host.hasPrefix("public") ? "8.8.8.8" : "10.0.0.1"))]
            })
        for _ in 1...3 {
            #expect(try await policy.destination(of: URL(string: "https://public.example/verify")!, for: "app") == IPAddress("8.8.8.8"))
            await #expect(throws: OutboundFailure.self) { try await policy.destination(of: URL(string: "https://inside.example/")!, for: "app") }
        }
        #expect(lookups.withLock { $0 } == ["public.example", "inside.example", "inside.example", "inside.example"])
    }

    /// glibc reads `012.1.2.3` as 10.1.2.3 (octal) where a decimal reading says
    /// 12.1.2.3: every IPv4 form but the canonical one is refused, at setup and at call time.
    @Test(arguments: ["012.1.2.3", "127.1", "0x7f.1", "2130706433", "0x7f000001", "10.0.0.01", "sms.example.123", "8.8.8.8."])
    func numbersThatAreNotCanonicalAddressesAreRefused(_ host: String) async throws {
        let url = try #require(URL(string: "http://\(host)/sms"))
        #expect(OutboundAddressPolicy.refusal(of: url, field: "url") != nil)
        for policy in [OutboundAddressPolicy(allowsPrivateAddresses: false), OutboundAddressPolicy(allowsPrivateAddresses: true)] {
            await #expect(throws: OutboundFailure.self) { try await policy.destination(of: url, for: "app") }
        }
    }

    @Test(arguments: ["8.8.8.8", "sms.example.com", "example.com.", "[2606:4700::1111]"])
    func namesAndCanonicalAddressesAreFine(_ host: String) throws {
        #expect(OutboundAddressPolicy.refusal(of: try #require(URL(string: "https://\(host)/sms")), field: "url") == nil)
    }
}
