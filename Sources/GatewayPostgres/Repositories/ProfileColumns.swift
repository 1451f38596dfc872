public import GatewayCore
public import PostgresNIO

/// The profile fields (``ProfileField``) as a plugin's table keeps them: one
/// nullable text column per field, named as the field, so a new field is a
/// column added by the plugin's migration and these statements follow.
public enum ProfileColumns {
    /// `first_name, last_name, ...`, in ``ProfileField`` order.
    public static let names = UserProfile.fieldNames.joined(separator: ", ")

    /// `first_name = excluded.first_name, ...`: an upsert's update of every field.
    public static let fromExcluded = ProfileField.allCases.map { "\($0.name) = excluded.\($0.name)" }.joined(separator: ", ")

    /// `nullif(first_name, ''), ...`: the fields of an `unnest`, empty text as absent.
    public static let nullIfEmpty = ProfileField.allCases.map { "nullif(\($0.name), '')" }.joined(separator: ", ")

    /// `$first::text[], ...`: one array parameter per field, numbered from `first`.
    public static func arrayParameters(from first: Int) -> String {
        ProfileField.allCases.indices.map { "$\(first + $0)::text[]" }.joined(separator: ", ")
    }

    /// `$first, ...`: one parameter per field, numbered from `first`.
    public static func parameters(from first: Int) -> String {
        ProfileField.allCases.indices.map { "$\(first + $0)" }.joined(separator: ", ")
    }

    /// Appends each field's value (`nil` when absent), in ``ProfileField`` order.
    public static func bind(_ profile: UserProfile, to bindings: inout PostgresBindings) {
        for field in ProfileField.allCases { bindings.append(profile[field]) }
    }

    /// Appends one text array per field over `profiles` (an empty text when absent), for an `unnest`.
    public static func bindArrays(_ profiles: [UserProfile], to bindings: inout PostgresBindings) {
        for field in ProfileField.allCases { bindings.append(profiles.map { $0[field] ?? "" }) }
    }

    /// The profile of a row that selected ``names``.
    public static func profile(of row: PostgresRow) throws -> UserProfile {
        let columns = row.makeRandomAccess()
        var profile = UserProfile()
        for field in ProfileField.allCases { profile[field] = try columns[field.name].decode(String?.self) }
        return profile
    }
}
