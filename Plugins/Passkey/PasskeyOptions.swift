import Crypto
import Foundation
import GatewayCore
import GatewayPluginKit

/// `plugins.passkey` of an app: the app as a WebAuthn relying party, and
/// its native apps (for the origins they send and the association files).
///
/// ```json
/// {"rp_id": "example.com", "rp_name": "Example",
///  "origins": ["https://example.com", "https://www.example.com"],
///  "user_verification": "required", "algorithms": ["ES256", "RS256", "EdDSA"],
///  "ios_app_ids": ["ABCDE12345.com.example.app"],
///  "android_apps": [{"package_name": "com.example.app", "sha256_cert_fingerprints": ["AB:CD:…"]}],
///  "challenge_lifetime_seconds": 300}
/// ```
///
/// Only `rp_id` is required. `origins` defaults to `https://<rp_id>` (what
/// iOS sends); each Android app's fingerprints add the
/// `android:apk-key-hash:<base64url of the SHA-256>` origins that Android
/// sends. `user_verification` is `required` (default) or `preferred`;
/// `algorithms` must include ES256. `localhost` (with its `http://` origins)
/// is for development apps only.
struct PasskeyOptions: Sendable, Equatable {
    struct AndroidApp: Sendable, Equatable {
        let packageName: String
        /// The signing certificates' SHA-256, 32 bytes each.
        let fingerprints: [[UInt8]]

        /// As assetlinks.json writes them: upper-case hex pairs joined by colons.
        var fingerprintTexts: [String] {
            fingerprints.map { $0.map { String(format: "%02X", $0) }.joined(separator: ":") }
        }
    }

    static let maximumOrigins = 20
    static let maximumApps = 20
    static let challengeLifetimes = 30...300

    /// The options as declared once (``OptionSchema``); ``init(_:environment:)`` adds what a type cannot say.
    static let schema = OptionSchema(
        name: "PasskeyOptions", description: "The app as a WebAuthn relying party (docs/plugins.md, \"Passkeys\").",
        fields: [
            OptionField(
                "rp_id", .text(maximumLength: 253), required: true,
                description: "The lower-case domain the passkeys belong to, e.g. example.com."),
            OptionField(
                "rp_name", .text(TextRule(length: 1...64)),
                description: "Shown by some platforms while creating a passkey; rp_id by default."),
            OptionField(
                "origins", .list(of: .text(maximumLength: 2048), count: 0...maximumOrigins),
                description:
                    "https://<rp_id or a subdomain>[:port] (http://localhost only for rp_id localhost); https://<rp_id> by default, which iOS sends."
            ),
            OptionField("user_verification", .choice(["required", "preferred"], default: "required")),
            OptionField(
                "algorithms", .list(of: .choice(["ES256", "RS256", "EdDSA"]), count: 0...3, defaultValue: ["ES256", "RS256", "EdDSA"]),
                description: "Must include ES256."),
            OptionField(
                "ios_app_ids", .list(of: .text(maximumLength: 256), count: 0...maximumApps),
                description: "<team id>.<bundle id> of each iOS app, for apple-app-site-association."),
            OptionField(
                "android_apps",
                .list(
                    of: .object([
                        OptionField("package_name", .text(maximumLength: 256), required: true),
                        OptionField(
                            "sha256_cert_fingerprints",
                            .list(
                                of: .text(
                                    TextRule(
                                        pattern: ("^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$", meaning: "32 hex bytes joined by colons"))),
                                count: 1...10), required: true),
                    ]), count: 0...maximumApps),
                description: "Each adds the android:apk-key-hash origins its fingerprints make, and its assetlinks.json statement."),
            OptionField("challenge_lifetime_seconds", .integer(challengeLifetimes, default: 300)),
        ])

    let relyingParty: RelyingParty
    let name: String
    let webOrigins: [String]
    let iosAppIDs: [String]
    let androidApps: [AndroidApp]
    let challengeLifetimeSeconds: Int

    init(_ options: JSONValue, environment: AppEnvironment) throws(GatewayError) {
        let path = "plugins.passkey"
        let reader = try JSONInput(options, path: path)
        try reader.rejectUnknown(allowed: [
            "rp_id", "rp_name", "origins", "user_verification", "algorithms", "ios_app_ids", "android_apps",
            "challenge_lifetime_seconds",
        ])
        let rpID = try reader.requiredString("rp_id")
        guard Self.isDomain(rpID) else {
            throw .invalidRequest("\(path).rp_id must be a lower-case domain name without scheme or port, e.g. example.com.")
        }
        if environment == .production && rpID == "localhost" {
            throw .invalidRequest("\(path).rp_id localhost is for development apps; a production app's passkeys need its domain.")
        }
        name = try reader.string("rp_name") ?? rpID
        guard (1...64).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .invalidRequest("\(path).rp_name must be 1 to 64 characters without control characters.") }

        let origins = try reader.strings("origins", maximumCount: Self.maximumOrigins) ?? ["https://\(rpID)"]
        for origin in origins where !Self.isOrigin(origin, of: rpID) {
            throw .invalidRequest(
                "\(path).origins: '\(origin)' is not https://<rp_id or a subdomain>[:port] (http://localhost only for rp_id localhost).")
        }
        webOrigins = origins

        let verification = try reader.string("user_verification") ?? "required"
        guard verification == "required" || verification == "preferred" else {
            throw .invalidRequest("\(path).user_verification must be required or preferred.")
        }
        let names = try reader.strings("algorithms", maximumCount: 3) ?? ["ES256", "RS256", "EdDSA"]
        var algorithms: Set<COSEKey.Algorithm> = []
        for name in names {
            guard let algorithm = Self.algorithms[name] else {
                throw .invalidRequest("\(path).algorithms: '\(name)' is not ES256, RS256 or EdDSA.")
            }
            algorithms.insert(algorithm)
        }
        guard algorithms.contains(.es256) else {
            throw .invalidRequest("\(path).algorithms must include ES256, which every passkey provider supports.")
        }

        iosAppIDs = try reader.strings("ios_app_ids", maximumCount: Self.maximumApps) ?? []
        for appID in iosAppIDs where !Self.isAppleAppID(appID) {
            throw .invalidRequest("\(path).ios_app_ids: '\(appID)' is not <10-character team id>.<bundle id>.")
        }
        var androidApps: [AndroidApp] = []
        for (index, entry) in (try reader.objects("android_apps", maximumCount: Self.maximumApps) ?? []).enumerated() {
            let entryPath = "\(path).android_apps[\(index)]"
            try entry.rejectUnknown(allowed: ["package_name", "sha256_cert_fingerprints"])
            let package = try entry.requiredString("package_name")
            guard Self.isPackageName(package) else { throw .invalidRequest("\(entryPath).package_name is not an Android package name.") }
            guard let texts = try entry.strings("sha256_cert_fingerprints", maximumCount: 10), !texts.isEmpty else {
                throw .invalidRequest("\(entryPath).sha256_cert_fingerprints must list 1 to 10 fingerprints.")
            }
            var fingerprints: [[UInt8]] = []
            for text in texts {
                guard let bytes = Self.fingerprint(text) else {
                    throw .invalidRequest("\(entryPath).sha256_cert_fingerprints: '\(text)' is not 32 hex bytes joined by colons.")
                }
                fingerprints.append(bytes)
            }
            androidApps.append(AndroidApp(packageName: package, fingerprints: fingerprints))
        }
        self.androidApps = androidApps
        challengeLifetimeSeconds = try reader.integer("challenge_lifetime_seconds", in: Self.challengeLifetimes) ?? 300

        let androidOrigins = androidApps.flatMap(\.fingerprints).map { "android:apk-key-hash:\(Base64URL.encode($0))" }
        relyingParty = RelyingParty(
            id: rpID, origins: Set(origins + androidOrigins), requiresUserVerification: verification == "required",
            algorithms: algorithms)
    }

    static let algorithms: [String: COSEKey.Algorithm] = ["ES256": .es256, "RS256": .rs256, "EdDSA": .edDSA]

    /// Lower-case labels of letters, digits and hyphens, dot-separated.
    static func isDomain(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                    && label.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
            }
    }

    /// `https://<host>[:port]` whose host is the RP ID or a subdomain of it
    /// (WebAuthn's rule for which origins an RP ID serves); `http://localhost`
    /// only where the RP ID is `localhost`.
    static func isOrigin(_ origin: String, of rpID: String) -> Bool {
        let scheme = rpID == "localhost" && origin.hasPrefix("http://") ? "http://" : "https://"
        guard origin.hasPrefix(scheme) else { return false }
        let authority = origin.dropFirst(scheme.count)
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let host = String(parts[0])
        if parts.count == 2 {
            guard let port = Int(parts[1]), (1...65535).contains(port), String(port) == parts[1] else { return false }
        }
        return isDomain(host) && (host == rpID || host.hasSuffix(".\(rpID)"))
    }

    static func isAppleAppID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1)
        return parts.count == 2 && parts[0].utf8.count == 10
            && parts[0].utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
            && isBundleID(parts[1])
    }

    private static func isBundleID(_ text: Substring) -> Bool {
        (1...155).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2E
            }
    }

    /// Dot-separated identifiers, each starting with a letter (two at least).
    static func isPackageName(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && text.utf8.count <= 255
            && parts.allSatisfy { part in
                guard let first = part.utf8.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) else { return false }
                return part.utf8.allSatisfy {
                    (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F
                }
            }
    }

    /// `AB:CD:…` (32 pairs, either case) as bytes.
    static func fingerprint(_ text: String) -> [UInt8]? {
        let pairs = text.split(separator: ":", omittingEmptySubsequences: false)
        guard pairs.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for pair in pairs {
            guard pair.utf8.count == 2, pair.allSatisfy(\.isHexDigit), let byte = UInt8(pair, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
