import GatewayCore
import GatewayOutbound
import Testing

@testable import EmailCodePlugin

/// What an app admin may set as `plugins.email_code`: nothing that reaches
/// the gateway's own network, downgrades TLS in production, or adds a header.
@Suite struct EmailCodeOptionsTests {
    static func options(
        sender: [String: JSONValue], environment: AppEnvironment = .production, more: [String: JSONValue] = [:],
        allowsPrivateAddresses: Bool = false
    ) throws(GatewayError) -> EmailCodeOptions {
        var members = more
        members["from"] = members["from"] ?? .string("codes@gateway.example")
        members["sender"] = .object(sender)
        return try EmailCodeOptions(
            .object(members), environment: environment, allowsLogSender: true, allowsPrivateAddresses: allowsPrivateAddresses)
    }

    static let smtp: [String: JSONValue] = ["type": .string("smtp"), "host": .string("smtp.example.net")]

    @Test func aPublicSubmissionServerIsTakenWithSTARTTLSOnPort587ByDefault() throws {
        guard case .smtp(let settings) = try Self.options(sender: Self.smtp).sender else {
            Issue.record("not an SMTP sender")
            return
        }
        #expect(settings.port == 587)
        #expect(settings.security == .startTLS)
        #expect(settings.greetingName == "gateway.example")
    }

    @Test(arguments: [
        ["host": "127.0.0.1"], ["host": "10.1.2.3"], ["host": "169.254.169.254"], ["host": "0x7f.1"], ["host": "2130706433"],
        ["port": "5432"], ["port": "6379"], ["port": "22"], ["tls": "none"], ["tls": "ssl"], ["host": "smtp.example.net\r\nX: y"],
        ["host": "smtp.example.net:25"],
    ] as [[String: String]])
    func anAppAdminCannotPointTheSenderAtThisNetworkAnotherServiceOrPlainText(_ change: [String: String]) {
        var sender = Self.smtp
        for (key, value) in change { sender[key] = Int(value).map { .number(Double($0)) } ?? .string(value) }
        #expect(throws: GatewayError.self, "\(change)") { try Self.options(sender: sender) }
    }

    @Test func anOperatorWhoAllowsPrivateAddressesMayUseAnyPortAndHost() throws {
        var sender = Self.smtp
        sender["host"] = .string("127.0.0.1")
        sender["port"] = .number(2526)
        _ = try Self.options(sender: sender, allowsPrivateAddresses: true)
    }

    @Test func theLogSenderAndPlainTextAreForDevelopmentAppsOnly() throws {
        #expect(throws: GatewayError.self) { try Self.options(sender: ["type": .string("log")]) }
        _ = try Self.options(sender: ["type": .string("log")], environment: .development)
        var plain = Self.smtp
        plain["tls"] = .string("none")
        _ = try Self.options(sender: plain, environment: .development)
    }

    @Test(arguments: [
        ["from_name": JSONValue.string("Codes\r\nBcc: m@example.net")],
        ["from": .string("codes@gateway.example\r\nBcc: m@example.net")],
        ["templates": .object(["en": .object(["subject": .string("Hi\r\nBcc: m@example.net"), "text": .string("{code}")])])],
        ["templates": .object(["en": .object(["subject": .string("Hi"), "text": .string("no code here")])])],
        ["templates": .object(["EN_us": .object(["subject": .string("Hi"), "text": .string("{code}")])])],
        ["default_locale": .string("pt")],
    ])
    func headersAndTemplatesWithLineBreaksOrWithoutTheCodeAreRefused(_ more: [String: JSONValue]) {
        #expect(throws: GatewayError.self, "\(more)") { try Self.options(sender: Self.smtp, more: more) }
    }

    @Test func aRequestsLocaleThenItsAcceptLanguageThenTheDefaultChooseTheTemplate() throws {
        let templates = try Self.options(
            sender: Self.smtp,
            more: ["templates": .object(["pt-br": .object(["subject": .string("Código {code}"), "text": .string("{code}")])])]
        ).templates
        #expect(templates.locale(requested: "pt-BR", acceptLanguage: "de") == "pt-br")
        #expect(templates.locale(requested: "fr-CA", acceptLanguage: nil) == "fr")
        #expect(templates.locale(requested: nil, acceptLanguage: "it;q=0.9, es-MX;q=0.8") == "es")
        #expect(templates.locale(requested: "xx", acceptLanguage: "*") == "en")
    }
}
