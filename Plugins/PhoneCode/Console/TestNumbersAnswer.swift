/// The test numbers in an app's `phone_code` options, as the app's answer
/// holds them: a number, its fixed code, and when it stops working.
struct TestNumbersAnswer: Decodable, Sendable {
    struct TestNumber: Decodable, Sendable {
        let phoneNumber: String
        let code: String
        let expiresAt: String?

        enum CodingKeys: String, CodingKey {
            case phoneNumber = "phone_number"
            case code
            case expiresAt = "expires_at"
        }

        var templateValues: [String: Any] {
            var values: [String: Any] = ["phone_number": phoneNumber, "code": code]
            values["expires_at"] = expiresAt
            return values
        }
    }

    let testNumbers: [TestNumber]?

    enum CodingKeys: String, CodingKey {
        case testNumbers = "test_numbers"
    }
}
