import Foundation
import GatewayConsoleKit
import GatewayCore

/// The settings page's self-service fields (`self_service` of the admin
/// API): who may sign up, which flows are on, and the codes' lifetime and
/// tries. Sent only when they differ from the stored settings, so that an
/// app's admin saving other fields never asks to change them.
enum SelfServiceForm {
    struct Number: Sendable {
        let field: String
        let label: String
        let range: ClosedRange<Int>
        let setting: any WritableKeyPath<SelfServiceSettings, Int> & Sendable
    }

    struct Flow: Sendable {
        let field: String
        let label: String
        let setting: any WritableKeyPath<SelfServiceSettings, Bool> & Sendable
    }

    static let numbers = [
        Number(field: "code_ttl_seconds", label: "Code lifetime (seconds)", range: SelfServiceSettings.codeLifetimes, setting: \.codeLifetimeSeconds),
        Number(field: "max_attempts", label: "Wrong tries before a code dies", range: SelfServiceSettings.attempts, setting: \.maximumAttempts),
        Number(
            field: "recent_sign_in_seconds", label: "A sign-in counts as recent for (seconds)", range: SelfServiceSettings.recentSignIns,
            setting: \.recentSignInSeconds),
    ]
    static let flows = [
        Flow(field: "password_reset", label: "Users recover a forgotten password by email", setting: \.passwordReset),
        Flow(field: "email_change", label: "Users change their address", setting: \.emailChange),
        Flow(field: "account_deletion", label: "Users delete their account", setting: \.accountDeletion),
    ]

    /// What the template shows: the stored settings, or what was typed after a refusal.
    static func values(stored: SelfServiceSettings?, form: FormInput?) -> [String: Any] {
        let shown = stored ?? SelfServiceSettings()
        let signUp = form?["self_service_sign_up"] ?? shown.signUp.rawValue
        let userIDs = form?["self_service_user_ids"] ?? shown.userIDs.rawValue
        return [
            "sign_up": SelfServiceSettings.SignUp.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == signUp] },
            "email_ids": userIDs == SelfServiceSettings.UserIDs.email.rawValue,
            "flows": flows.map { flow in
                [
                    "field": flow.field, "label": flow.label,
                    "checked": form.map { $0["self_service_\(flow.field)"] == "true" } ?? shown[keyPath: flow.setting],
                ]
            },
            "numbers": numbers.map { number in
                [
                    "field": number.field, "label": "\(number.label), \(number.range.lowerBound) to \(number.range.upperBound)",
                    "value": form?["self_service_\(number.field)"] ?? "\(shown[keyPath: number.setting])",
                ]
            },
        ]
    }

    /// The `self_service` member to send, nil when the form asks for what is
    /// stored or has no self-service fields; a message when a number is not one. Words go to the API as
    /// typed, which refuses one it does not know.
    static func member(_ form: FormInput, stored: SelfServiceSettings?) -> Result<JSONValue?, Problem> {
        // A form without the fieldset (a script's, an older page's) leaves self-service as it is.
        guard let signUp = form["self_service_sign_up"] else { return .success(nil) }
        let userIDs = form["self_service_user_ids"] ?? "generated"
        var asked = SelfServiceSettings()
        var object: [String: JSONValue] = ["sign_up": .string(signUp), "user_ids": .string(userIDs)]
        for flow in flows {
            let on = form["self_service_\(flow.field)"] == "true"
            asked[keyPath: flow.setting] = on
            object[flow.field] = .bool(on)
        }
        for number in numbers {
            guard let value = Int(form["self_service_\(number.field)"]?.trimmingCharacters(in: .whitespaces) ?? "") else {
                return .failure(Problem(message: "\(number.label): enter a whole number."))
            }
            asked[keyPath: number.setting] = value
            object[number.field] = .number(Double(value))
        }
        guard let parsedSignUp = SelfServiceSettings.SignUp(rawValue: signUp),
            let parsedUserIDs = SelfServiceSettings.UserIDs(rawValue: userIDs)
        else { return .success(.object(object)) }
        asked.signUp = parsedSignUp
        asked.userIDs = parsedUserIDs
        return .success(asked == (stored ?? SelfServiceSettings()) ? nil : .object(object))
    }

    struct Problem: Error {
        let message: String
    }
}
