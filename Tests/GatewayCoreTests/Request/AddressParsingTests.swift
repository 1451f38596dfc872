import GatewayCore
import Testing

/// Addresses from `X-Forwarded-For`, the socket and `http.trusted_proxies`
/// are read exactly as `inet_pton` reads them. The refusals below were found
/// by `scripts/fuzz` (client-address), which checks that agreement.
@Suite struct AddressParsingTests {
    @Test(arguments: [
        "", "/", "/8", "10.0.0.0/", "10.0.0.0/+8", "10.0.0.0/33", "::/129", "10.0.0.0/8/8",
    ])
    func malformedRangesAreRefusedNotCrashedOn(_ text: String) {
        #expect(CIDR(text) == nil)
    }

    @Test(arguments: [
        "+1.2.3.4", "01.2.3.4", "1.2.3.04", "10.0.0.1::", "10.0.0.1::1", "::+f", "::-0", "[::1]junk", "[::1",
        "1.2.3.4.5", "::1%eth0", "1:2:3:4:5:6:7:8:9",
    ])
    func whatInetPtonRefusesIsRefused(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test(arguments: [
        ("1.2.3.4", "1.2.3.4"), ("[2001:db8::1]", "2001:db8:0:0:0:0:0:1"), ("::ffff:192.0.2.1", "192.0.2.1"),
        ("::1.2.3.4", "0:0:0:0:0:0:102:304"), ("0.0.0.0", "0.0.0.0"),
    ])
    func wellFormedAddressesAreReadAndWrittenCanonically(_ text: String, _ canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == canonical)
        #expect(IPAddress(address.description) == address)
    }

    @Test func aRangeReadsItsOwnText() throws {
        let range = try #require(CIDR("10.1.0.0/16"))
        #expect(CIDR(range.description) == range)
        #expect(range.contains(try #require(IPAddress("10.1.200.3"))))
        #expect(!range.contains(try #require(IPAddress("10.2.0.1"))))
    }
}
