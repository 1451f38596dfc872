import Foundation
import GatewayHTTPTestSupport
import GatewayTestSupport
import Testing

/// `openapi.yaml` judged by an OpenAPI 3.1 validator from PyPI (`scripts/test` installs it).
@Suite struct OpenAPIDocumentTests {
    @Test func theDocumentIsValidOpenAPI31() async throws {
        let validator = try SuiteEnvironment.value("GATEWAY_TEST_OPENAPI_VALIDATOR")
        let exit = try await GatewayProcess.runProgram(
            validator, [openAPIDocumentURL.path], environment: ProcessInfo.processInfo.environment)
        #expect(exit.status == 0, "\(exit.output)")
        #expect(exit.output.contains("OK"))
    }
}
