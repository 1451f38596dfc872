import GatewayCore
import Testing

/// `mappingStrings(at:_:)`, the one way a plugin or profile names its
/// secrets: members by name, `*` for each element, the path it reached.
@Suite struct JSONValueMappingTests {
    @Test func stringsAtThePathAreMappedWithThePathTheyWereFoundAt() {
        let options: JSONValue = .object([
            "users": .array([
                .object(["user_id": .string("ada"), "password": .string("p0")]),
                .object(["user_id": .string("bob")]),
                .object(["password": .number(7)]),
                .object(["password": .string("p3")]),
            ]),
            "sender": .object(["secret": .string("s"), "url": .string("https://x")]),
        ])
        var seen: [String] = []
        let mapped = options.mappingStrings(at: ["users", "*", "password"]) { path, value in
            seen.append(path)
            return "sealed(\(value))"
        }
        #expect(seen == ["users.0.password", "users.3.password"])
        guard case .object(let members) = mapped, case .array(let users)? = members["users"] else {
            Issue.record("not an object")
            return
        }
        #expect(users[0] == .object(["user_id": .string("ada"), "password": .string("sealed(p0)")]))
        #expect(users[1] == .object(["user_id": .string("bob")]), "a member that is not there stays away")
        #expect(users[2] == .object(["password": .number(7)]), "a value that is no string is left")
        #expect(members["sender"] == options.mappingStrings(at: ["sender", "missing"]) { _, _ in "x" }.member("sender"))
        #expect(options.mappingStrings(at: ["sender", "secret"]) { path, _ in path } != options)
        #expect(options.mappingStrings(at: ["users", "password"]) { _, _ in "x" } == options, "a name does not match an array")
    }
}

extension JSONValue {
    fileprivate func member(_ name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[name]
    }
}
