import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird
import NIOCore

/// Reads an NDJSON import as it arrives and writes it in batches: one
/// transaction (with its audit row) per ``batchSize`` users, so an import
/// of any size holds one batch in memory. Bad lines are reported and
/// skipped; the rest is stored. Re-running an import is safe: users are
/// created or replaced by user id. A replaced user who is disabled now, or
/// has another password, is a change every holder of theirs hears
/// (``UserLifecycle``), as by PUT: an HR sync that offboards someone ends
/// their sessions; one that sends the same users again changes nothing.
struct UserImporter {
    static let batchSize = 500
    static let maximumLineBytes = 16 * 1024
    /// JSON's whitespace: a line of only these is blank and skipped.
    private static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
    /// Bad lines reported one by one; past this, only counted.
    static let maximumReportedErrors = 1000

    let appID: AppID
    let options: PasswordOptions
    let users: any PasswordUserStore
    let hasher: PasswordHasher
    let lifecycle: UserLifecycle
    let requestID: String
    let actor: UUID

    /// The import's answer: totals and the bad lines.
    struct Summary: Encodable {
        struct LineError: Encodable {
            let line: Int
            let user_id: String?
            let error: String
            let message: String
        }

        var lines = 0
        var created = 0
        var replaced = 0
        var failed = 0
        var errors: [LineError] = []
        var errors_truncated = false

        mutating func fail(line: Int, userID: String?, _ error: GatewayError) {
            failed += 1
            guard errors.count < UserImporter.maximumReportedErrors else {
                errors_truncated = true
                return
            }
            errors.append(LineError(line: line, user_id: userID, error: error.code.rawValue, message: error.message))
        }
    }

    /// A parsed line waiting for its batch.
    private struct Pending {
        let line: Int
        let userID: String
        let input: UserInput
    }

    func run(_ body: RequestBody) async throws -> Summary {
        var summary = Summary()
        var batch: [Pending] = []
        var batchUserIDs: Set<String> = []
        var lineNumber = 0
        var buffer: [UInt8] = []
        var overlong = false

        func take(_ bytes: ArraySlice<UInt8>) async throws {
            lineNumber += 1
            if let pending = parse(bytes, line: lineNumber, summary: &summary) {
                if batchUserIDs.contains(pending.userID) || batch.count == Self.batchSize {
                    try await write(&batch, summary: &summary)
                    batchUserIDs.removeAll(keepingCapacity: true)
                    // Parsing is all CPU: let the other requests on this thread run between batches,
                    // whether or not the store's write suspended.
                    await Task.yield()
                }
                batch.append(pending)
                batchUserIDs.insert(pending.userID)
            }
        }

        for try await chunk in body {
            for byte in chunk.readableBytesView {
                if byte == UInt8(ascii: "\n") {
                    if overlong {
                        lineNumber += 1
                        summary.lines += 1
                        summary.fail(line: lineNumber, userID: nil, .invalidRequest("The line is longer than \(Self.maximumLineBytes) bytes."))
                        overlong = false
                    } else {
                        try await take(buffer[...])
                    }
                    buffer.removeAll(keepingCapacity: true)
                } else if !overlong {
                    buffer.append(byte)
                    if buffer.count > Self.maximumLineBytes {
                        overlong = true
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        if overlong {
            lineNumber += 1
            summary.lines += 1
            summary.fail(line: lineNumber, userID: nil, .invalidRequest("The line is longer than \(Self.maximumLineBytes) bytes."))
        } else if !buffer.isEmpty {
            try await take(buffer[...])
        }
        try await write(&batch, summary: &summary)
        return summary
    }

    /// One line as a user, or `nil` (with the failure noted) when it is bad.
    /// Blank lines are skipped without a result.
    private func parse(_ bytes: ArraySlice<UInt8>, line: Int, summary: inout Summary) -> Pending? {
        guard bytes.contains(where: { !Self.whitespace.contains($0) }) else { return nil }
        summary.lines += 1
        do throws(LineFailure) {
            let (userID, input) = try Self.user(fromLine: bytes, policy: options.policy)
            return Pending(line: line, userID: userID, input: input)
        } catch {
            summary.fail(line: line, userID: error.userID, error.error)
            return nil
        }
    }

    /// Why a line is not a user: the 400, and the user id when the line named one.
    struct LineFailure: Error {
        let userID: String?
        let error: GatewayError
    }

    /// Reads one non-blank line of an import: a JSON object with a valid
    /// `user_id` and a password or password hash.
    static func user(fromLine bytes: ArraySlice<UInt8>, policy: PasswordPolicy) throws(LineFailure) -> (String, UserInput) {
        let json: JSONInput
        do {
            json = try JSONInput.parse(Array(bytes), subject: "line")
        } catch {
            throw LineFailure(userID: nil, error: error)
        }
        let userID = json.members["user_id"]?.stringValue
        do throws(GatewayError) {
            guard let userID else { throw .invalidRequest("user_id is required, as a string.") }
            _ = try TokenRequest.validatedUserID(userID)
            let input = try UserInput(json, policy: policy, extraFields: ["user_id"])
            guard input.password != nil else { throw .invalidRequest("password or password_hash is required.") }
            return (userID, input)
        } catch {
            throw LineFailure(userID: userID, error: error)
        }
    }

    /// Hashes the batch's plain passwords (as many at once as the hasher
    /// runs), then stores the batch and its audit row in one transaction.
    private func write(_ batch: inout [Pending], summary: inout Summary) async throws {
        guard !batch.isEmpty else { return }
        defer { batch.removeAll(keepingCapacity: true) }
        let hashed = try await hashPasswords(batch)
        var records: [PasswordUserRecord] = []
        var lines: [Int] = []
        for (pending, hash) in zip(batch, hashed) {
            switch hash {
            case .success(let hash):
                records.append(
                    PasswordUserRecord(
                        userID: pending.userID, hash: hash, profile: pending.input.profile,
                        disabled: pending.input.disabled ?? false))
                lines.append(pending.line)
            case .failure(let error):
                summary.fail(line: pending.line, userID: pending.userID, error)
            }
        }
        guard !records.isEmpty else { return }
        let (users, appID, requestID, actor) = (self.users, self.appID, self.requestID, self.actor)
        let firstLine = batch[0].line
        let lastLine = batch[batch.count - 1].line
        let written = records
        let origin = UserChangeOrigin(requestID: requestID, actor: actor)
        let outcomes = try await users.upsert(written, in: appID, by: origin) { outcomes in
            let count = outcomes.filter(\.isCreated).count
            let taken = outcomes.filter { $0 == .addressTaken }.count
            return AuditEvent(
                appID: appID, event: "admin.users.imported", outcome: .success, requestID: requestID, actor: actor,
                detail: [
                    "lines": "\(firstLine)-\(lastLine)", "created": "\(count)", "replaced": "\(outcomes.count - count - taken)",
                ])
        }
        for (index, outcome) in outcomes.enumerated() where outcome == .addressTaken {
            summary.fail(line: lines[index], userID: written[index].userID, PasswordUpsert.addressTakenError)
        }
        let count = outcomes.filter(\.isCreated).count
        summary.created += count
        summary.replaced += outcomes.count - count - outcomes.filter { $0 == .addressTaken }.count
        for change in outcomes.flatMap(\.userChanges) { try await lifecycle.apply(change) }
    }

    private func hashPasswords(_ batch: [Pending]) async throws -> [Result<PasswordHash, GatewayError>] {
        let (hasher, parameters, appID) = (self.hasher, options.argon2, self.appID)
        var results = [Result<PasswordHash, GatewayError>?](repeating: nil, count: batch.count)
        try await withThrowingTaskGroup(of: (Int, Result<PasswordHash, GatewayError>).self) { group in
            var running = 0
            for (index, pending) in batch.enumerated() {
                switch pending.input.password {
                case .hash(let hash)?:
                    results[index] = .success(hash)
                case .plain(let text)?:
                    if running == hasher.limits.concurrency, let (done, result) = try await group.next() {
                        results[done] = result
                        running -= 1
                    }
                    group.addTask {
                        do {
                            return (index, .success(try await hasher.hash(text, parameters: parameters, for: .admin(appID))))
                        } catch let error as GatewayError {
                            return (index, .failure(error))
                        }
                    }
                    running += 1
                case nil:
                    preconditionFailure("parse() admits only lines with a password")
                }
            }
            for try await (done, result) in group { results[done] = result }
        }
        return results.map { $0! }
    }
}
