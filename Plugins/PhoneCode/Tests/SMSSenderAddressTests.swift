import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayOutbound
import Logging
@testable import PhoneCodePlugin
import Synchronization
import Testing

/// The SMS sender under the gateway's outbound rules.
@Suite struct SMSSenderAddressTests {
    /// Hosts the outbound policy refuses (OutboundAddressPolicyTests) cannot be set up as senders.
    @Test(arguments: ["012.1.2.3", "127.1", "0x7f.1", "2130706433", "0x7f000001", "10.0.0.01", "sms.example.123", "8.8.8.8."])
    func numbersThatAreNotCanonicalAddressesAreRefused(_ host: String) async throws {
        let url = try #require(URL(string: "http://\(host)/sms"))
        let options = JSONValue.object([
            "sender": .object(["type": .string("webhook"), "url": .string(url.absoluteString), "secret": .string("0123456789abcdef")])
        ])
        #expect(throws: GatewayError.self) { try PhoneCodeOptions(options, environment: .production) }
    }

    @Test(arguments: ["8.8.8.8", "sms.example.com", "example.com.", "[2606:4700::1111]"])
    func namesAndCanonicalAddressesAreFine(_ host: String) throws {
        let url = try #require(URL(string: "https://\(host)/sms"))
        let options = JSONValue.object([
            "sender": .object(["type": .string("webhook"), "url": .string(url.absoluteString), "secret": .string("0123456789abcdef")])
        ])
        _ = try PhoneCodeOptions(options, environment: .production)
    }

    /// DNS rebinding: the name resolves to an allowed address when checked
    /// and to a forbidden one afterwards. The delivery connects to the address
    /// checked, so the server on the forbidden address hears nothing. To stay
    /// on this machine, only 127.0.0.1 is forbidden here and 127.0.0.2 plays
    /// the public address (nothing listens there).
    @Test func theDeliveryConnectsToTheAddressItChecked() async throws {
        try await FakeHTTPServer.with { base, loopback in
            let port = try #require(URL(string: base)?.port)
            let answers = Mutex(0)
            let rebinding = OutboundAddressPolicy(
                allowsPrivateAddresses: false,
                resolve: { _ in
                    let call = answers.withLock { count in
                        count += 1
                        return count
                    }
                    return [try #require(IPAddress(call == 1 ? "127.0.0.2" : "127.0.0.1"))]
                }, blockedRanges: [try #require(CIDR("127.0.0.1/32"))])
            let sender = SMSSender(addresses: rebinding, logger: Logger(label: "test"))
            let message = SMSMessage(
                appID: AppID(uuid: UUID()), phoneNumber: try PhoneNumber.parse("+4915112345678", field: "n"), code: "123456",
                expiresIn: 300)
            // `localhost` is what the system resolver would turn into loopback.
            let url = try #require(URL(string: "http://localhost:\(port)/sms"))
            await #expect(throws: SMSDeliveryFailure.self) {
                try await sender.send(message, via: .webhook(url: url, secret: "s"))
            }
            #expect(loopback.requests.isEmpty)
        }
    }

    /// A public sender that redirects to the gateway's own network gets no
    /// second request: redirects are not followed, not retried, and the send
    /// fails. (The attempt has a minute: a loaded machine once took the
    /// default 5 s to read the 302, which the sender rightly retried.)
    @Test func aRedirectIsAFailedDeliveryNotFollowed() async throws {
        try await FakeHTTPServer.with { inside, target in
            try await FakeHTTPServer.with(statuses: [302, 302], location: inside + "/metadata") { outside, redirecting in
                let sender = SMSSender(
                    addresses: OutboundAddressPolicy(allowsPrivateAddresses: true), attemptTimeout: .seconds(60),
                    logger: Logger(label: "test"))
                let message = SMSMessage(
                    appID: AppID(uuid: UUID()), phoneNumber: try PhoneNumber.parse("+4915112345678", field: "n"), code: "123456",
                    expiresIn: 300)
                let failure = await #expect(throws: SMSDeliveryFailure.self) {
                    try await sender.send(message, via: .webhook(url: URL(string: outside + "/sms")!, secret: "s"))
                }
                #expect(failure?.reason == "HTTP 302")
                #expect(redirecting.requests.count == 1)
                #expect(target.requests.isEmpty)
            }
        }
    }

    /// Refused, reset or timed out: the reason an app admin reads is the same.
    @Test func everyConnectionFailureReadsTheSame() async throws {
        let sender = SMSSender(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true), logger: Logger(label: "test"))
        let message = SMSMessage(
            appID: AppID(uuid: UUID()), phoneNumber: try PhoneNumber.parse("+4915112345678", field: "n"), code: "123456",
            expiresIn: 300)
        let failure = await #expect(throws: SMSDeliveryFailure.self) {
            try await sender.send(message, via: .webhook(url: URL(string: "http://127.0.0.1:9/sms")!, secret: "s"))
        }
        #expect(failure?.reason == "no answer")
    }
}
