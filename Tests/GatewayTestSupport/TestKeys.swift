public import Foundation
public import GatewayCore

/// RSA keys for tests. Generating one takes a while, so each test process
/// makes one shared key and reuses it.
public enum TestKeys {
    public static let shared: RSAKeyPair = try! RSAKeyPair.generate(bits: 2048)

    /// A private key in PEM as `openssl` writes it: `pkcs1` (BEGIN RSA PRIVATE
    /// KEY) or `pkcs8` (BEGIN PRIVATE KEY), of `bits` bits.
    public static func opensslPEM(format: String, bits: Int = 2048) async throws -> String {
        try await OpenSSL.generatedPEM(
            format == "pkcs1"
                ? ["genrsa", "-traditional", "\(bits)"]
                : ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)"])
    }
}

/// The `openssl` command line tool: an implementation independent of the
/// BoringSSL inside swift-crypto, used to check what the gateway produces.
public enum OpenSSL {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `openssl` with `arguments`, off the cooperative pool (a key
    /// generation can take seconds); returns what it printed.
    @discardableResult
    public static func run(_ arguments: [String]) async throws -> String {
        let exit = try await GatewayProcess.runProgram(
            "/usr/bin/openssl", arguments, environment: ProcessInfo.processInfo.environment)
        guard exit.status == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(exit.output)")
        }
        return exit.output
    }

    /// The key `openssl` makes with `arguments` (`genpkey ...`, `genrsa ...`),
    /// in PEM: written to a file, apart from what it prints as it works.
    public static func generatedPEM(_ arguments: [String]) async throws -> String {
        try await inFolder { folder in
            let file = folder.appending(path: "key.pem").path
            // genrsa takes the size last, after its options.
            let withOutput = arguments.first == "genrsa"
                ? Array(arguments.dropLast()) + ["-out", file, arguments.last!] : arguments + ["-out", file]
            try await run(withOutput)
            return try String(contentsOfFile: file, encoding: .utf8)
        }
    }

    /// Runs `body` with a fresh temporary folder, removed afterwards.
    static func inFolder<Value>(_ body: (URL) async throws -> Value) async throws -> Value {
        let folder = FileManager.default.temporaryDirectory.appending(path: "openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    /// Whether `signature` is a valid RS256 (PKCS#1 v1.5, SHA-256) signature of
    /// `message` under `publicKeyPEM`, as OpenSSL judges it.
    public static func verifiesRS256(message: Data, signature: Data, publicKeyPEM: String) async throws -> Bool {
        try await inFolder { folder in
            let keyFile = folder.appending(path: "public.pem")
            let signatureFile = folder.appending(path: "signature.bin")
            let messageFile = folder.appending(path: "message.bin")
            try Data(publicKeyPEM.utf8).write(to: keyFile)
            try signature.write(to: signatureFile)
            try message.write(to: messageFile)
            do {
                let output = try await run(
                    ["dgst", "-sha256", "-verify", keyFile.path, "-signature", signatureFile.path, messageFile.path])
                return output.contains("Verified OK")
            } catch {
                return false
            }
        }
    }
}
