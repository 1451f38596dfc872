import Foundation
import GatewayCore
import GatewayPluginKit
import Logging
import StaticUsersPlugin
import GatewayTestSupport
import Testing

/// The static plugin reads its options strictly and never serves production apps.
@Suite struct StaticUsersOptionsTests {
    func app(_ environment: AppEnvironment = .development) -> AppSettings {
        AppSettings(
            appID: AppID(uuid: .init()), name: "a", environment: environment, providerID: ProviderID(uuid: .init()),
            credentialTypes: ["static"])
    }

    func refusal(_ options: JSONValue, environment: AppEnvironment = .development) -> String? {
        do {
            _ = try StaticUsersPlugin().makeVerifier(
                for: app(environment), options: options, services: .unconnected)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func acceptsNoOptionsAndAFullUser() {
        #expect(refusal(.null) == nil)
        #expect(
            refusal(.object([
                "allow_any_user": .bool(false),
                "users": .array([.object(["user_id": .string("a"), "password": .string("p"), "avatar_url": .string("http://x.example/a")])]),
            ])) == nil)
    }

    @Test(arguments: [
        (JSONValue.string("x"), "plugins.static must be an object."),
        (.object(["userz": .array([])]), "plugins.static.userz is not an option"),
        (.object(["allow_any_user": .string("yes")]), "plugins.static.allow_any_user must be true or false."),
        (.object(["users": .object([:])]), "plugins.static.users must be a list"),
        (.object(["users": .array([.object(["password": .string("p")])])]), "plugins.static.users[0].user_id must be 1 to 256 bytes"),
        (.object(["users": .array([.object(["user_id": .string("a\tb")])])]), "plugins.static.users[0].user_id must not contain control characters."),
        (.object(["users": .array([.object(["user_id": .string("a"), "pasword": .string("p")])])]), "plugins.static.users[0].pasword is not a field"),
        (.object(["users": .array([.object(["user_id": .string("a"), "avatar_url": .string("/a.png")])])]), "plugins.static.users[0].avatar_url must be an absolute http(s) URL of at most 2048 bytes."),
        (.object(["users": .array([.object(["user_id": .string("a"), "avatar_url": .string("javascript:alert(1)")])])]), "plugins.static.users[0].avatar_url"),
        (.object(["users": .array([.object(["user_id": .string("a")]), .object(["user_id": .string("a")])])]), "plugins.static.users[1].user_id repeats 'a'."),
    ])
    func refusesBadOptionsNamingThem(_ options: JSONValue, _ message: String) {
        #expect(refusal(options)?.hasPrefix(message) == true)
    }

    @Test func refusesProductionApps() {
        #expect(refusal(.null, environment: .production) == "Static test users are only available to development apps.")
    }
}

extension PluginServices {
    /// Services for code that needs no database: every table in memory.
    static let unconnected: PluginServices = {
        let stores = InMemoryStores().stores
        return PluginServices(
            storage: .memory(PluginMemory(recording: { _ in })), apps: stores.apps, sessions: stores.sessions,
            userChanges: stores.userChanges, logger: Logger(label: "unconnected"))
    }()
}
