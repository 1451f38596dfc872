import GatewayCore
import Testing

@Suite struct SlidingWindowTests {
    let perMinute = RateLimitPolicy(name: "ip", limit: 10, periodSeconds: 60, counting: .everyRequest)
    let failures = RateLimitPolicy(name: "user_failures", limit: 10, periodSeconds: 900, counting: .failures)

    @Test func windowsAreAlignedToThePeriod() {
        let window = SlidingWindow(policy: perMinute, now: 1_000_000_045)
        #expect(window.windowStart == 1_000_000_020)
        #expect(window.previousWindowStart == 999_999_960)
        #expect(abs(window.elapsedFraction - 25.0 / 60) < 1e-9)
    }

    @Test func countsUpToTheLimitPass() {
        let window = SlidingWindow(policy: perMinute, now: 1_000_000_020)
        let atLimit = window.verdict(current: 10, previous: 0)
        // The last event that fits passes, and says how long until the next one would: what a
        // refusal at the same count (a reservation refused, which adds nothing) answers.
        #expect(atLimit.allowed && atLimit.remaining == 0)
        #expect(atLimit.retryAfterSeconds > 0)
        #expect(atLimit.retryAfterSeconds == window.verdict(current: 10, previous: 0, allowed: false).retryAfterSeconds)
        #expect(window.verdict(current: 9, previous: 0).retryAfterSeconds == 0)
        #expect(window.verdict(current: 4, previous: 0).remaining == 6)
        #expect(!window.verdict(current: 11, previous: 0).allowed)
    }

    @Test func aBurstAtTheWindowEdgeCannotPassTwiceTheLimit() {
        // Ten requests in the last second of one window...
        let before = SlidingWindow(policy: perMinute, now: 1_000_000_079)
        #expect(before.verdict(current: 10, previous: 0).allowed)
        // ...leave almost no room in the first seconds of the next.
        let after = SlidingWindow(policy: perMinute, now: 1_000_000_081)
        #expect(!after.verdict(current: 1, previous: 10).allowed)
        // Over the whole next window at most `limit` more pass in total.
        var passed = 0
        var current = 0
        for second in 80..<140 {
            let window = SlidingWindow(policy: perMinute, now: 1_000_000_000 + Double(second))
            if window.verdict(current: current + 1, previous: 10).allowed {
                current += 1
                passed += 1
            }
        }
        #expect(passed <= 10)
        #expect(passed >= 9)
    }

    @Test func aRefusalDecidedByStorageReportsNoRoomAndWhenOneMoreFits() {
        let window = SlidingWindow(policy: failures, now: 1_000_000_000)
        // A granted reservation that made the count 9 leaves one more.
        #expect(window.verdict(current: 9, previous: 0, allowed: true).remaining == 1)
        // A refused reservation leaves the count at the limit: no room, and a wait.
        let refused = window.verdict(current: 10, previous: 0, allowed: false)
        #expect(!refused.allowed)
        #expect(refused.remaining == 0)
        #expect(refused.retryAfterSeconds > 0)
    }

    @Test func retryAfterIsWhenOneMoreFits() throws {
        // Only the previous window weighs: wait until it has decayed enough.
        let decaying = SlidingWindow(policy: perMinute, now: 1_000_000_020)  // start of a window
        let verdict = decaying.verdict(current: 1, previous: 10)
        #expect(!verdict.allowed)
        // 10 * (1 - f) + 1 <= 9  =>  f >= 0.2  =>  12 seconds.
        #expect(verdict.retryAfterSeconds == 12)
        let later = SlidingWindow(policy: perMinute, now: 1_000_000_020 + Double(verdict.retryAfterSeconds))
        #expect(later.verdict(current: 2, previous: 10).allowed)

        // This window alone is full: wait for the next window and its decay.
        let full = SlidingWindow(policy: perMinute, now: 1_000_000_050)  // 30 s into the window
        let wait = full.verdict(current: 11, previous: 0).retryAfterSeconds
        // 30 s to the next window, then 11 * (1 - f) <= 9  =>  f >= 2/11  =>  about 11 s more.
        #expect(wait == 41)
        let then = SlidingWindow(policy: perMinute, now: 1_000_000_050 + Double(wait))
        #expect(then.verdict(current: 1, previous: 11).allowed)
    }
}

@Suite struct ClientAddressTests {
    let proxies = [CIDR("10.0.0.0/8")!, CIDR("fd00::/8")!]

    @Test func anUntrustedPeerIsTheClientWhateverItsHeaderSays() {
        #expect(ClientAddress.resolve(peer: "203.0.113.7", forwardedFor: ["1.2.3.4"], trustedProxies: proxies) == "203.0.113.7")
        #expect(ClientAddress.resolve(peer: "203.0.113.7", forwardedFor: [], trustedProxies: []) == "203.0.113.7")
    }

    @Test func aTrustedProxyPassesOnTheNearestUntrustedHop() {
        // The client forged the first entry; the load balancer appended the real peer.
        #expect(
            ClientAddress.resolve(peer: "10.0.0.2", forwardedFor: ["6.6.6.6, 198.51.100.9", "10.1.1.1"], trustedProxies: proxies)
                == "198.51.100.9")
        #expect(ClientAddress.resolve(peer: "fd00::1", forwardedFor: ["2001:db8::5"], trustedProxies: proxies) == "2001:db8:0:0:0:0:0:5")
        // Only proxies in the chain: the farthest one is all we know.
        #expect(ClientAddress.resolve(peer: "10.0.0.2", forwardedFor: ["10.9.9.9"], trustedProxies: proxies) == "10.9.9.9")
        // Garbage stops the walk at the last good hop.
        #expect(ClientAddress.resolve(peer: "10.0.0.2", forwardedFor: ["1.1.1.1, not-an-ip"], trustedProxies: proxies) == "10.0.0.2")
    }

    @Test func withoutProxiesThePeerComesOutInItsCanonicalForm() {
        let cases = [
            ("203.0.113.7", "203.0.113.7"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
            // A leading zero is no address to inet_pton (nor here): kept as text, never read as octal or decimal.
            ("010.0.0.1", "010.0.0.1"), ("::ffff:192.0.2.1", "192.0.2.1"), ("2001:DB8::5", "2001:db8:0:0:0:0:0:5"),
            ("256.1.1.1", "256.1.1.1"), ("not-an-ip", "not-an-ip"),
        ]
        for (peer, client) in cases {
            #expect(ClientAddress.resolve(peer: peer, forwardedFor: ["1.2.3.4"], trustedProxies: []) == client, "\(peer)")
        }
        #expect(ClientAddress.resolve(peer: nil, forwardedFor: [], trustedProxies: []) == nil)
    }

    @Test func addressesAndRangesParse() {
        #expect(IPAddress("::ffff:192.0.2.1")?.description == "192.0.2.1")
        #expect(IPAddress("[::1]")?.description == "0:0:0:0:0:0:0:1")
        for bad in ["256.1.1.1", "1.2.3", "1::2::3", "12345::", "", "a.b.c.d"] { #expect(IPAddress(bad) == nil, "\(bad)") }
        #expect(CIDR("192.168.0.0/16")!.contains(IPAddress("192.168.44.1")!))
        #expect(!CIDR("192.168.0.0/17")!.contains(IPAddress("192.168.200.1")!))
        #expect(CIDR("0.0.0.0/0")!.contains(IPAddress("8.8.8.8")!))
        #expect(!CIDR("10.0.0.0/8")!.contains(IPAddress("::1")!))
        #expect(CIDR("10.0.0.0/33") == nil)
    }
}
