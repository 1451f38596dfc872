public import Foundation
public import GatewayCore

/// RSA keys for tests. Generating one takes a while, so each test process
/// makes one shared key and reuses it.
public enum TestKeys {
    public static let shared: RSAKeyPair = try! RSAKeyPair.generate(bits: 2048)

    /// A private key in PEM as `openssl` writes it: `pkcs1` (BEGIN RSA PRIVATE
    /// KEY) or `pkcs8` (BEGIN PRIVATE KEY), of `bits` bits.
    public static func opensslPEM(format: String, bits: Int = 2048) throws -> String {
        let arguments =
            format == "pkcs1"
            ? ["genrsa", "-traditional", "\(bits)"]
            : ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)"]
        return try OpenSSL.run(arguments)
    }
}

/// The `openssl` command line tool: an implementation independent of the
/// BoringSSL inside swift-crypto, used to check what the gateway produces.
public enum OpenSSL {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `openssl` with `arguments`; returns its standard output.
    @discardableResult
    public static func run(_ arguments: [String], input: Data? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(input ?? Data())
        try stdin.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(text) \(errorText)")
        }
        return text
    }

    /// Whether `signature` is a valid RS256 (PKCS#1 v1.5, SHA-256) signature of
    /// `message` under `publicKeyPEM`, as OpenSSL judges it.
    public static func verifiesRS256(message: Data, signature: Data, publicKeyPEM: String) throws -> Bool {
        let folder = FileManager.default.temporaryDirectory.appending(path: "openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appending(path: "public.pem")
        let signatureFile = folder.appending(path: "signature.bin")
        try Data(publicKeyPEM.utf8).write(to: keyFile)
        try signature.write(to: signatureFile)
        do {
            let output = try run(
                ["dgst", "-sha256", "-verify", keyFile.path, "-signature", signatureFile.path], input: message)
            return output.contains("Verified OK")
        } catch {
            return false
        }
    }
}
