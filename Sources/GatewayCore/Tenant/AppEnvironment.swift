/// Whether an app is for development or real users. Development apps may use
/// test-only credential types (static users); production apps never can.
public enum AppEnvironment: String, Sendable, Codable, CaseIterable {
    case development
    case production
}
