import GatewayCore

/// The profile fields of a form, for `profile_fields.mustache`: one entry
/// per ``ProfileField``, so a new field shows up in every form that has them.
public enum ProfileForm {
    /// Each field's name, title, value (`values[name]`: what is stored, or
    /// what was typed) and the error placed beside it (`errors["error_<name>"]`).
    public static func fields(values: [String: Any], errors: [String: Any] = [:]) -> [[String: Any]] {
        ProfileField.allCases.map { field in
            var entry: [String: Any] = [
                "name": field.name, "title": field.title, "type": field.inputType, "value": values[field.name] ?? "",
            ]
            if let error = errors["error_\(field.name)"] { entry["error"] = error }
            return entry
        }
    }
}
