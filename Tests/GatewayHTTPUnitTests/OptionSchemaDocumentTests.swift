import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import Testing
import Yams

/// What `openapi.yaml` publishes of each plugin's options is its one
/// declaration (``CredentialPlugin/optionSchema``): `components.schemas.<name>`
/// equals ``OptionSchema/jsonSchema``, and every shared shape it declares its
/// ``OptionSchema/components`` entry, member for member.
@Suite struct OptionSchemaDocumentTests {
    @Test func theDocumentPublishesEachPluginsDeclaredOptions() throws {
        let document = try #require(try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let declared = PluginRegistry.installed.optionSchemas
        #expect(declared.count >= 4, "plugins with declared options: \(declared.map(\.type))")
        let pluginOptions = try #require((schemas["PluginOptions"] as? [String: Any])?["properties"] as? [String: Any])
        for (type, schema) in declared {
            #expect(
                Self.value(pluginOptions[type]) == .object(["$ref": .string("#/components/schemas/\(schema.name)")]),
                "PluginOptions.\(type) names \(schema.name)")
            Self.expectPublished(schema, in: schemas)
        }
    }

    /// The app's own settings declared the same way (`sessions`, `mfa`, `self_service`).
    @Test func theDocumentPublishesTheAppSettingsDeclarations() throws {
        let document = try #require(try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let app = try #require((schemas["App"] as? [String: Any])?["properties"] as? [String: Any])
        for setting in AppSettingSchemas.all {
            #expect(
                Self.value(app[setting.member]) == .object(["$ref": .string("#/components/schemas/\(setting.schema.name)")]),
                "App.\(setting.member) names \(setting.schema.name)")
            Self.expectPublished(setting.schema, in: schemas)
        }
    }

    /// `token_profiles`: a list of the installed profiles, each its declared settings.
    @Test func theDocumentPublishesEachProfilesDeclaredSettings() throws {
        let document = try #require(try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let expected = PluginRegistry.installed.profiles.jsonSchema
        #expect(PluginRegistry.installed.profiles.names.count >= 5)
        #expect(
            Self.value(schemas["TokenProfiles"]) == expected,
            "openapi.yaml's TokenProfiles differs from the declaration (./scripts/openapi-options rewrites it); the declaration as JSON:\n\(JSONText(expected))")
    }

    /// `rate_limits`: numbers per policy, declared in ``AppSettingSchemas/rateLimits``.
    @Test func theDocumentPublishesTheRateLimitDeclaration() throws {
        let document = try #require(try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let expected = AppSettingSchemas.rateLimitsJSONSchema
        #expect(
            Self.value(schemas["RateLimitOverrides"]) == expected,
            "openapi.yaml's RateLimitOverrides differs from the declaration (./scripts/openapi-options rewrites it); the declaration as JSON:\n\(JSONText(expected))")
    }

    static func expectPublished(_ schema: OptionSchema, in schemas: [String: Any]) {
        for (name, expected) in [(schema.name, schema.jsonSchema)] + schema.components.sorted(by: { $0.key < $1.key }) {
            let published = Self.value(schemas[name])
            #expect(
                published == expected,
                "openapi.yaml's \(name) differs from the declaration (./scripts/openapi-options rewrites it); the declaration as JSON:\n\(JSONText(expected))")
        }
    }

    /// A YAML value as JSON; numbers as doubles, as ``JSONValue`` holds them.
    static func value(_ any: Any?) -> JSONValue {
        switch any {
        case nil, is NSNull: return .null
        case let value as Bool: return .bool(value)
        case let value as Int: return .number(Double(value))
        case let value as Double: return .number(value)
        case let value as String: return .string(value)
        case let value as [Any]: return .array(value.map { Self.value($0) })
        case let value as [String: Any]: return .object(value.mapValues { Self.value($0) })
        default: return .string("\(any!)")
        }
    }
}

private func JSONText(_ value: JSONValue) -> String {
    String(decoding: JSONCoding.bytes(of: value, indented: true), as: UTF8.self)
}
