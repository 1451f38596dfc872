import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// U+0000 can be in no PostgreSQL text: the phone plugin's bodies refuse it
/// at the boundary with a 400 naming the field.
@Suite struct PhoneCodeNulCharacterTests {
    @Test func codeRequestsAndOptionsRefuseNulNamingTheField() async throws {
        try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
            let app = try await gateway.createPhoneApp()
            let code = try await gateway.test {
                try await $0.post(
                    "/v1/phone_codes", contentType: "application/json",
                    body: #"{"app_id":"\#(app.appID)","phone_number":"+4915112345678\u0000"}"#)
            }
            #expect(code.status == .badRequest)
            #expect((try errorBody(code)["message"] as? String)?.hasPrefix("phone_number must not contain the NUL character") == true)

            let token = try await gateway.adminToken(.operator)
            let options = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: token,
                json: ["plugins": ["phone_code": ["test_numbers": [["phone_number": "\u{0}"]]]]])
            #expect(options.status == .badRequest)
            #expect(
                (try errorBody(options)["message"] as? String)?.hasPrefix(
                    "plugins.phone_code.test_numbers[0].phone_number must not contain the NUL character") == true)
        }
    }
}
