import Foundation
import GatewayCore
@testable import PhoneCodePlugin
import Testing

@Suite struct SenderAddressPolicyTests {
    @Test(arguments: [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
    ])
    func privateAndSpecialAddressesAreNotPublic(_ text: String) throws {
        #expect(!SenderAddressPolicy.isPublic(try #require(IPAddress(text))))
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
    func publicAddressesArePublic(_ text: String) throws {
        #expect(SenderAddressPolicy.isPublic(try #require(IPAddress(text))))
    }

    @Test func aSendChecksTheHostByAddressOrName() async throws {
        let publicOnly = SenderAddressPolicy(allowsPrivateAddresses: false)
        for url in ["http://127.0.0.1:9/sms", "https://[::1]/sms", "http://localhost:8080/", "http://169.254.169.254/latest"] {
            await #expect(throws: SMSDeliveryFailure.self, "\(url)") { try await publicOnly.check(URL(string: url)!) }
        }
        // A public address is let through without any lookup.
        try await publicOnly.check(URL(string: "https://8.8.8.8/sms")!)
        try await SenderAddressPolicy(allowsPrivateAddresses: true).check(URL(string: "http://127.0.0.1:9/sms")!)
    }
}
