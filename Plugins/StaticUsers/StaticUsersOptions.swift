import Foundation
import GatewayCore
import GatewayPluginKit

/// The static plugin's options, read strictly: an unknown key or a badly
/// typed value is a 400 that names it.
struct StaticUsersOptions: Sendable {
    struct User: Sendable {
        let identity: VerifiedIdentity
        let password: String?
    }

    static let maximumUsers = 1000
    private static let userKeys = Set(["user_id", "password"] + UserProfile.fieldNames)

    let users: [String: User]
    let allowAnyUser: Bool

    init(_ options: JSONValue) throws(GatewayError) {
        let members: [String: JSONValue]
        switch options {
        case .null: members = [:]
        case .object(let object): members = object
        default: throw .invalidRequest("plugins.static must be an object.")
        }
        if let unknown = members.keys.sorted().first(where: { !["users", "allow_any_user"].contains($0) }) {
            throw .invalidRequest("plugins.static.\(unknown) is not an option of the static plugin.")
        }
        switch members["allow_any_user"] {
        case nil: allowAnyUser = false
        case .bool(let value): allowAnyUser = value
        default: throw .invalidRequest("plugins.static.allow_any_user must be true or false.")
        }
        var users: [String: User] = [:]
        switch members["users"] {
        case nil: break
        case .array(let list) where list.count <= Self.maximumUsers:
            for (index, entry) in list.enumerated() {
                let user = try Self.user(entry, path: "plugins.static.users[\(index)]")
                guard users[user.identity.userID] == nil else {
                    throw .invalidRequest("plugins.static.users[\(index)].user_id repeats '\(user.identity.userID)'.")
                }
                users[user.identity.userID] = user
            }
        default:
            throw .invalidRequest("plugins.static.users must be a list of at most \(Self.maximumUsers) users.")
        }
        self.users = users
    }

    private static func user(_ entry: JSONValue, path: String) throws(GatewayError) -> User {
        guard case .object(let fields) = entry else { throw .invalidRequest("\(path) must be an object.") }
        if let unknown = fields.keys.sorted().first(where: { !userKeys.contains($0) }) {
            throw .invalidRequest("\(path).\(unknown) is not a field of a static user.")
        }
        func text(_ key: String) throws(GatewayError) -> String? {
            switch fields[key] {
            case nil, .null: return nil
            case .string(let value) where value.utf8.count <= 1024: return value
            default: throw .invalidRequest("\(path).\(key) must be a string of at most 1024 bytes.")
            }
        }
        /// Write-only: the admin API shows it as the marker, which is never taken for a password.
        func password() throws(GatewayError) -> String? {
            let value = try text("password")
            guard value != RedactedSecret.marker else {
                throw .invalidRequest(
                    "\(path).password must be the password itself; the admin API never shows it, so send it again when changing these options.")
            }
            return value
        }
        let userID = try TokenRequest.validatedUserID(try text("user_id") ?? "", field: "\(path).user_id")
        var profile = UserProfile()
        for field in ProfileField.allCases {
            profile[field] = try field.checked(try text(field.name), at: "\(path).\(field.name)")
        }
        return User(identity: VerifiedIdentity(userID: userID, profile: profile), password: try password())
    }
}

extension StaticUsersOptions {
    /// `plugins.static`, declared. A user's password is kept (sent back as
    /// `********`) only while the entry's `user_id` is unchanged: it is that
    /// user's. User ids' and profile fields' forms, and ids that repeat,
    /// the plugin checks.
    static let schema = OptionSchema(
        name: "StaticUsersOptions",
        description:
            "Fixed test users for development apps on a development deployment (docs/plugins.md, the table of plugins); production apps can never use them.",
        fields: [
            OptionField(
                "users",
                .list(
                    of: .object(
                        [
                            OptionField("user_id", .text(TextRule(length: 1...1024)), required: true, destination: true),
                            OptionField("password", .secret(1...1024), description: "A listed user with a password must send it; one without needs none."),
                        ] + UserProfile.fieldNames.map { OptionField($0, .text(maximumLength: 1024)) }),
                    count: 0...maximumUsers)),
            OptionField(
                "allow_any_user", .boolean(default: false),
                description: "Also accept any unlisted user id with no credential at all, as Layer's quick-start sample backend did."),
        ])
}
