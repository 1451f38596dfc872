import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Every way a token request fails: status, stable code, and the JSON error shape.
@Suite struct TokenErrorTests {
    /// Checks the error shape and returns the message.
    @discardableResult
    func expectError(_ response: TestResponse, _ status: HTTPResponse.Status, _ code: String) throws -> String {
        #expect(response.status == status)
        #expect(response.headers[.contentType] == "application/json; charset=utf-8")
        let body = try errorBody(response)
        #expect(Set(body.keys) == ["error", "message", "status", "request_id"])
        #expect(body["error"] as? String == code)
        #expect(body["status"] as? Int == status.code)
        #expect(body["request_id"] as? String == response.headers[HTTPField.Name("x-request-id")!])
        return try #require(body["message"] as? String)
    }

    @Test func unsupportedMediaTypesAre415() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            for contentType in ["text/plain", nil, "multipart/form-data; boundary=x"] as [String?] {
                let response = try await gateway.test {
                    try await $0.post(contentType: contentType, body: #"{"app_id":"\#(app.appID)"}"#)
                }
                try expectError(response, .unsupportedMediaType, "unsupported_media_type")
            }
        }
    }

    @Test func bodiesOver64KiBAre413() async throws {
        try await MemoryGateway.with { gateway in
            let body = #"{"app_id":""# + String(repeating: "a", count: 64 * 1024) + #""}"#
            let response = try await gateway.test { try await $0.post(contentType: "application/json", body: body) }
            try expectError(response, .contentTooLarge, "payload_too_large")
            #expect(try errorBody(response)["message"] as? String == "The request body exceeds the size limit of 65536 bytes.")
        }
    }

    @Test(arguments: [
        ("not json", "The body is not a JSON object."),
        ("[1,2]", "The body is not a JSON object."),
        (#"{"app_id":"X","user_id":42,"nonce":"n"}"#, "user_id must be a string."),
        (#"{"app_id":"X","user_id":"a","nonce":"n","credentials":{"type":"static","password":7}}"#, "credentials.password must be a string."),
        (#"{"app_id":"X","user_id":"a","nonce":"n","credentials":{"password":"p"}}"#, "credentials.type is required."),
        (#"{"app_id":"X","user_id":"a","nonce":"n","credentials":"static"}"#, "credentials must be an object of strings."),
        (#"{"app_id":"X","user_id":"a","user_id":"b","nonce":"n"}"#, "The body names a member twice."),
        (#"{"app_id":"X","x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
         "The body nests arrays and objects deeper than 32 levels."),
        (#"{"app_id":"X","user_id":"a"}"#, "nonce is required."),
        (#"{"user_id":"a","nonce":"n"}"#, "app_id is required."),
        (#"{"app_id":"layer:///apps/beta/X","user_id":"a","nonce":"n"}"#, "app_id must be"),
        (#"{"app_id":"X","user_id":"","nonce":"n"}"#, "user_id must be 1 to 256 bytes"),
        (#"{"app_id":"X","user_id":"a\u0000b","nonce":"n"}"#, "user_id must not contain control characters."),
        (#"{"app_id":"X","user_id":"a","nonce":"abc def"}"#, "nonce contains a space"),
    ])
    func malformedRequestsAre400NamingTheField(_ template: String, _ message: String) async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let body = template.replacingOccurrences(of: "X", with: app.appID.description)
            let response = try await gateway.test { try await $0.post(contentType: "application/json", body: body) }
            let text = try expectError(response, .badRequest, "invalid_request")
            #expect(text.hasPrefix(message))
        }
    }

    @Test(arguments: [
        "app_id=X&user_id=a&user_id=b&nonce=n",
        "app_id=X&user_id=a&nonce=n&credentials[type]=static&credentials[type]=password",
        "app_id=X&user_id=a&nonce=n&nonce=",
    ])
    func aFormFieldNamedTwiceIs400(_ template: String) async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let body = template.replacingOccurrences(of: "X", with: app.appID.description)
            let response = try await gateway.test {
                try await $0.post(contentType: "application/x-www-form-urlencoded", body: body)
            }
            let text = try expectError(response, .badRequest, "invalid_request")
            #expect(text == "The form body names a field twice.")
        }
    }

    @Test func aMalformedFormEscapeIs400() async throws {
        try await MemoryGateway.with { gateway in
            let response = try await gateway.test {
                try await $0.post(contentType: "application/x-www-form-urlencoded", body: "app_id=%zz&nonce=n")
            }
            try expectError(response, .badRequest, "invalid_request")
        }
    }

    @Test func anUnknownAppIs404() async throws {
        try await MemoryGateway.with { gateway in
            let response = try await gateway.test {
                try await $0.postJSON(["app_id": UUID().uuidString, "user_id": "a", "nonce": "n"])
            }
            try expectError(response, .notFound, "unknown_app")
        }
    }

    @Test func aDisabledAppIs403() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp { $0.isEnabled = false }
            let response = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            try expectError(response, .forbidden, "app_disabled")
        }
    }

    @Test func aWrongPasswordAndAnUnknownUserLookTheSame() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            var wrongPassword = aliceRequest(app)
            wrongPassword["credentials"] = ["type": "static", "password": "wonderlanD"]
            var unknownUser = aliceRequest(app)
            unknownUser["user_id"] = "mallory"
            var missingPassword = aliceRequest(app)
            missingPassword["credentials"] = ["type": "static"]
            var bodies: [[String: String]] = []
            for request in [wrongPassword, unknownUser, missingPassword] {
                let body = request
                let response = try await gateway.test { try await $0.postJSON(body) }
                try expectError(response, .unauthorized, "invalid_credentials")
                var members = try errorBody(response).compactMapValues { "\($0)" }
                members["request_id"] = nil
                bodies.append(members)
            }
            #expect(bodies[0] == bodies[1])
            #expect(bodies[1] == bodies[2])
        }
    }

    @Test func aCredentialTypeTheAppDoesNotAcceptIs400() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            var request = aliceRequest(app)
            request["credentials"] = ["type": "password", "password": "x"]
            let body = request
            let response = try await gateway.test { try await $0.postJSON(body) }
            let message = try expectError(response, .badRequest, "unsupported_credential_type")
            #expect(message.contains("'password'"))
        }
    }

    @Test func aProductionAppRefusesStaticUsers() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp { $0.environment = .production }
            let response = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            let message = try expectError(response, .forbidden, "credential_type_not_allowed")
            #expect(message.contains("development apps"))
        }
    }

    @Test func anAppWithoutAnActiveKeyIs503() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let response = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            try expectError(response, .serviceUnavailable, "no_signing_key")
        }
    }

    /// A known path asked with a method it does not serve: 405 naming the
    /// methods it does, for every route, parameters and admin paths included.
    @Test(arguments: [
        ("/v1/identity_tokens", HTTPRequest.Method.get, "POST"),
        ("/v1/identity_tokens", .put, "POST"),
        ("/v1/identity_tokens", .patch, "POST"),
        ("/v1/identity_tokens", .delete, "POST"),
        ("/v1/identity_tokens", .options, "POST"),
        ("/identity_tokens", .get, "POST"),
        ("/authenticate", .delete, "POST"),
        ("/v1/identity_tokens/validate", .get, "POST"),
        ("/v1/apps/9b1c0c59-6d32-4a7e-9c1e-3f4be1f1d2a0/jwks.json", .post, "GET, HEAD"),
        ("/admin/v1/apps/9b1c0c59-6d32-4a7e-9c1e-3f4be1f1d2a0", .put, "DELETE, GET, HEAD, PATCH"),
        ("/admin/v1/apps/9b1c0c59-6d32-4a7e-9c1e-3f4be1f1d2a0/users:import", .get, "POST"),
        ("/healthz", .post, "GET, HEAD"),
    ])
    func otherMethodsAre405WithAllow(path: String, method: HTTPRequest.Method, allow: String) async throws {
        try await MemoryGateway.with(plugins: .installed) { gateway in
            let response = try await gateway.test { try await $0.execute(uri: path, method: method) }
            let message = try expectError(response, .methodNotAllowed, "method_not_allowed")
            #expect(response.headers[.allow] == allow)
            #expect(message == "This path accepts \(allow), not \(method.rawValue).")
        }
    }

    /// Over a real connection: HEAD gets the 405's status and headers and no
    /// body, so the next answer on the same connection is read whole.
    @Test func headIsAnsweredWithoutABody() async throws {
        try await MemoryGateway.with { gateway in
            try await gateway.test(over: .live) { client in
                let head = try await client.execute(uri: "/v1/identity_tokens", method: .head)
                #expect(head.status == .methodNotAllowed)
                #expect(head.headers[.allow] == "POST")
                #expect(head.body.readableBytes == 0)
                let next = try await client.execute(uri: "/healthz", method: .get)
                #expect(next.status == .ok)
                #expect(String(buffer: next.body) == #"{"status":"ok"}"#)
            }
        }
    }

    /// HEAD where GET is served: GET's status and headers, no body.
    @Test func everyGetAlsoAnswersHead() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            try await gateway.test(over: .live) { client in
                for path in ["/healthz", "/v1/apps/\(app.appID)/jwks.json"] {
                    let head = try await client.execute(uri: path, method: .head)
                    #expect(head.status == .ok, "\(path)")
                    #expect(head.headers[.contentType] == "application/json; charset=utf-8", "\(path)")
                    #expect(head.body.readableBytes == 0, "\(path)")
                }
                #expect(try await client.execute(uri: "/healthz", method: .get).body.readableBytes > 0)
            }
        }
    }

    @Test func unknownPathsAre404WhateverTheMethod() async throws {
        try await MemoryGateway.with { gateway in
            for (path, method) in [
                ("/v2/nothing", HTTPRequest.Method.post), ("/v1/identity_tokens/extra", .post),
                ("/v1/apps/jwks.json", .get), ("/admin/v1/apps/x/y/z/w/v", .delete),
            ] {
                let response = try await gateway.test { try await $0.execute(uri: path, method: method) }
                try expectError(response, .notFound, "not_found")
                #expect(response.headers[.allow] == nil)
            }
        }
    }
}
