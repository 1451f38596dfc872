import Foundation
import GatewayCore
import GatewayPluginKit
public import Hummingbird

/// An `application/x-www-form-urlencoded` body, as a browser posts a form.
public struct FormInput: Sendable {
    /// The largest form the console reads, and only from a signed-in
    /// session: a user import pasted whole fits.
    public static let largestImport = 4 * 1024 * 1024
    /// Every other signed-in form's limit: the largest JSON body the admin
    /// API takes, url-encoded (each byte at most three).
    public static let largestForm = 3 * JSONInput.maximumBodyBytes
    /// The sign-in form's, read before anyone is known: a token and a path.
    public static let largestSignIn = 16 * 1024

    private let fields: [(name: String, value: String)]

    public init(fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    public static func read(_ request: Request, upTo maximumBytes: Int) async throws -> FormInput {
        guard let type = request.headers[.contentType]?.lowercased(),
            type.hasPrefix("application/x-www-form-urlencoded")
        else {
            throw GatewayError(.unsupportedMediaType, .unsupportedMediaType, "Send the form as application/x-www-form-urlencoded.")
        }
        let body = try await request.readBody(upTo: maximumBytes)
        return FormInput(encoded: String(decoding: body.readableBytesView, as: UTF8.self))
    }

    public init(encoded: String) {
        var fields: [(String, String)] = []
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields.append((decode(parts[0]), parts.count > 1 ? decode(parts[1]) : ""))
        }
        self.fields = fields
    }

    /// The first value sent under `name`, `nil` when none was sent.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// The value, whitespace trimmed; `nil` when missing or empty.
    public func text(_ name: String) -> String? {
        guard let value = self[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// Every value sent under `name` (checkboxes).
    public func all(_ name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// Whether a checkbox named `name` was ticked.
    public func isChecked(_ name: String) -> Bool { self[name] != nil }
}
