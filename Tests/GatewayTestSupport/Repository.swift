public import Foundation

/// The checkout the tests run from, for the scripts and documents they read.
public enum Repository {
    /// The repository's top folder (this file is Tests/GatewayTestSupport/Repository.swift).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A file or folder by its path from the top, such as "Benchmarks/load/run".
    public static func path(_ relative: String) -> String { root.appending(path: relative).path }
}
