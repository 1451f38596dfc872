/// A request path as a metrics label: ids replaced by their parameter names
/// (`/admin/v1/apps/{app_id}/users/{user_id}`), so the label set stays small
/// whatever the traffic.
enum RouteLabel {
    private static let parameterAfter: [Substring: String] = [
        "apps": "{app_id}", "keys": "{key_id}", "users": "{user_id}", "phone_numbers": "{phone_number}",
        "admin_tokens": "{token_id}",
    ]
    private static let fixedSegments: Set<Substring> = ["jwks.json", "activate", "validate", "users:import"]

    static func of(_ path: String) -> String {
        var segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for index in segments.indices.dropFirst() {
            if let name = parameterAfter[segments[index - 1]], !fixedSegments.contains(segments[index]),
                !parameterAfter.keys.contains(segments[index])
            {
                segments[index] = Substring(name)
            }
        }
        guard segments.count <= 8 else { return "/other" }
        return "/" + segments.joined(separator: "/")
    }
}
