import Foundation
import GatewayCore
import GatewayPluginKit

/// An app's messages for email codes by locale: its own
/// (`plugins.email_code.templates`: `{"<locale>": {"subject", "text", "html"}}`)
/// over the built-in ones in English, German, French and Spanish. Each may
/// use `{code}`, `{app_name}` and `{minutes}`; the text must show `{code}`.
/// A message's locale is the request's `locale`, else the first of its
/// `Accept-Language` the app has, else `default_locale` (`en`).
struct EmailTemplates: Sendable {
    struct Template: Sendable, Equatable {
        let subject: String
        let text: String
        let html: String?
    }

    private(set) var byLocale: [String: Template] = Self.builtIn
    let defaultLocale: String

    static let maximumLocales = 20

    init(_ reader: JSONInput?, defaultLocale: String?, path: String) throws(GatewayError) {
        if let reader {
            guard reader.members.count <= Self.maximumLocales else {
                throw .invalidRequest("\(path).templates: at most \(Self.maximumLocales) locales.")
            }
            for locale in reader.members.keys.sorted() {
                let field = "\(path).templates.\(locale)"
                guard Self.isLocale(locale) else {
                    throw .invalidRequest("\(path).templates: '\(locale)' is not a language tag like en or pt-br (lower case).")
                }
                guard let entry = try reader.object(locale) else { throw .invalidRequest("\(field) must be an object.") }
                try entry.rejectUnknown(allowed: ["subject", "text", "html"])
                guard let subject = try entry.string("subject"), !subject.isEmpty, subject.utf8.count <= 200,
                    HeaderText.isPlain(subject)
                else { throw .invalidRequest("\(field).subject is required: 1 to 200 bytes, no control characters.") }
                guard let text = try entry.string("text"), text.contains("{code}"), text.utf8.count <= 10_000 else {
                    throw .invalidRequest("\(field).text is required: at most 10 000 bytes, with {code} in it.")
                }
                let html = try entry.string("html")
                if let html, !html.contains("{code}") || html.utf8.count > 50_000 {
                    throw .invalidRequest("\(field).html must have {code} in it and be at most 50 000 bytes.")
                }
                byLocale[locale] = Template(subject: subject, text: text, html: html)
            }
        }
        let defaultLocale = defaultLocale ?? "en"
        guard byLocale[defaultLocale] != nil else {
            throw .invalidRequest("\(path).default_locale: '\(defaultLocale)' has no template (built in: de, en, es, fr).")
        }
        self.defaultLocale = defaultLocale
    }

    /// The locale to write in: `requested` if the app has it (or its
    /// language), else the first of `acceptLanguage` it has, else the default.
    func locale(requested: String?, acceptLanguage: String?) -> String {
        var wishes: [String] = []
        if let requested { wishes.append(requested.lowercased()) }
        for part in (acceptLanguage ?? "").split(separator: ",").prefix(10) {
            let tag = part.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            if !tag.isEmpty, tag != "*" { wishes.append(tag) }
        }
        for wish in wishes {
            if byLocale[wish] != nil { return wish }
            if let language = wish.split(separator: "-").first.map(String.init), byLocale[language] != nil { return language }
        }
        return defaultLocale
    }

    func template(for locale: String) -> Template { byLocale[locale] ?? byLocale[defaultLocale]! }

    /// The locales with a template, built in or the app's.
    var locales: [String] { byLocale.keys.sorted() }

    func has(_ locale: String) -> Bool { byLocale[locale] != nil }

    /// A BCP 47 tag as the templates key it: a 2–3 letter language and subtags of 1–8 letters or digits, lower case.
    static func isLocale(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLowercase })
        else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) } }
    }

    static let builtIn: [String: Template] = [
        "en": Template(
            subject: "Your {app_name} code: {code}",
            text: "Your sign-in code for {app_name} is {code}.\n\nIt expires in {minutes} minutes. If you did not ask for it, ignore this message.\n",
            html: nil),
        "de": Template(
            subject: "Ihr Code für {app_name}: {code}",
            text: "Ihr Anmeldecode für {app_name} lautet {code}.\n\nEr ist {minutes} Minuten gültig. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht.\n",
            html: nil),
        "fr": Template(
            subject: "Votre code {app_name} : {code}",
            text: "Votre code de connexion à {app_name} est {code}.\n\nIl expire dans {minutes} minutes. Si vous ne l’avez pas demandé, ignorez ce message.\n",
            html: nil),
        "es": Template(
            subject: "Tu código de {app_name}: {code}",
            text: "Tu código de acceso a {app_name} es {code}.\n\nCaduca en {minutes} minutos. Si no lo has pedido, ignora este mensaje.\n",
            html: nil),
    ]
}
