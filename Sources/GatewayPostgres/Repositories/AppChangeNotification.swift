/// The Postgres channel on which every change to an app or its keys is
/// announced, with the app's UUID as payload. Each replica listens and drops
/// that app from its cache, so a change made through one replica reaches all.
public enum AppChangeNotification {
    public static let channel = "gateway_app_changed"
    /// Sent when a replica cannot say which app changed: reload everything.
    public static let everything = "*"
}
