import Testing

@testable import EmailCodePlugin

/// How an address is read and normalised: one address, one key.
@Suite struct EmailAddressTests {
    @Test func theDomainIsLowerCasedAndTheKeyIsTheWholeAddressLowerCased() throws {
        let address = try #require(EmailAddress("Ada.Lovelace+codes@Example.COM"))
        #expect(address.mailbox == "Ada.Lovelace+codes@example.com")
        #expect(address.text == "ada.lovelace+codes@example.com")
    }

    /// RFC 3492 §7.1's and IDNA's own examples: the encoded label is what DNS and SMTP carry.
    @Test(arguments: [
        ("info@bücher.example", "info@xn--bcher-kva.example"),
        ("x@münchen.de", "x@xn--mnchen-3ya.de"),
        ("x@MÜNCHEN.de", "x@xn--mnchen-3ya.de"),
        ("x@例え.テスト", "x@xn--r8jz45g.xn--zckzah"),
    ])
    func internationalisedDomainsAreIDNAEncoded(_ written: String, _ mailbox: String) throws {
        #expect(try #require(EmailAddress(written)).mailbox == mailbox)
    }

    @Test(arguments: [
        "", "ada", "ada@", "@example.com", "ada@example", "ada@@example.com", "a b@example.com", "\"ada\"@example.com",
        "ada.@example.com", ".ada@example.com", "a..da@example.com", "ada@example..com", "ada@-example.com",
        "ada@example.com\r\nBcc: mallory@example.net", "ada@example.com\n", "ada\u{0}@example.com", "adä@example.com",
        "ada@exa mple.com", "ada@[127.0.0.1]", String(repeating: "a", count: 65) + "@example.com",
        "ada@" + String(repeating: "a", count: 64) + ".com",
        String(repeating: "a", count: 60) + "@" + String(repeating: "b.", count: 96) + "com",
    ])
    func anythingButADotAtomAtADomainIsRefused(_ written: String) {
        #expect(EmailAddress(written) == nil, "\(written.debugDescription)")
    }
}
