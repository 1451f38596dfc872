import Foundation
import GatewayCore
import GatewayPluginKit

extension TokenIssuer {
    /// A sign-in's second step: `{"type": "totp", "mfa_ticket": "mt1....",
    /// "code": "123456"}`, or `"type": "recovery_code"` with one of the
    /// user's recovery codes.
    ///
    /// The ticket decides whose sign-in this is: an unknown, spent or
    /// expired one is refused (401) and counts against the client's
    /// `refresh_failures`, as a bad refresh token does, and so is one whose
    /// user the first factor's verifier no longer vouches for (deleted,
    /// disabled, given a new password: ``CredentialVerifier/lapse(of:in:)``,
    /// the row's reason its answer). Then the user's
    /// `mfa_failures` reserves its unit before the code is checked: a wrong
    /// code keeps it. A right one spends the ticket and the code together,
    /// or neither (``SecondFactorStore/complete(ticket:in:factor:proof:)``):
    /// of two requests with the same code, or the same ticket, on any
    /// replicas, one gets a token. The token says both factors (`amr`), and
    /// a session it starts remembers them.
    func completeSecondFactor(_ asked: Asked, kind: String, _ attempt: inout Attempt) async throws -> Ready {
        let app = asked.tenant.settings
        let fields = asked.credentials.fields
        let reading = try await secondFactors.read(ticket: fields["mfa_ticket"], in: app.appID)
        if let found = reading.ticket { attempt.passage.row.userID = found.grant.userID }
        guard let signIn = reading.ticket?.grant, reading.refusal == nil else {
            try await attempt.passage.refuseHolder(reading.refusal ?? SecondFactorRefusal.ticketUnknown)
        }
        if let named = asked.tokenRequest.userID, named != signIn.userID {
            try await attempt.passage.refuseHolder(SecondFactorRefusal.ticketUserID)
        }
        if asked.tokenRequest.nonce != signIn.nonce {
            try await attempt.passage.refuseHolder(SecondFactorRefusal.ticketNonce)
        }
        // The first factor's user is asked again: one deleted, disabled or given a new password since the
        // first step completes into no token, whether or not the change ended this ticket first.
        let firstFactor = try? asked.tenant.verifier(for: signIn.credentialType)
        if let firstFactor,
            let lapsed = try await firstFactor.lapse(of: VerifiedIdentity(userID: signIn.userID, profile: signIn.profile), in: app)
        {
            try await attempt.passage.refuseHolder(lapsed)
        }

        // From here on a wrong code is the user's failure: its unit is reserved before the check, and kept.
        let subjects = [RateLimitPolicy.app.name: "*", RateLimitPolicy.mfaFailures.name: signIn.userID]
        try await attempt.passage.limits(subjects)
        func fail(_ reason: String) -> GatewayError {
            attempt.passage.row.reason = reason
            return GatewayError.invalidCredentials
        }
        guard let factor = try await secondFactors.store.factor(of: signIn.userID, in: app.appID) else {
            throw fail(SecondFactorRefusal.noFactor)
        }
        let code = fields["code"] ?? ""
        let proof: SecondFactorProof
        if kind == SecondFactors.totpType {
            switch try secondFactors.check(code, for: factor, at: now()) {
            case .success(let step): proof = .totp(step: step)
            case .failure(let refusal): throw fail(refusal.reason)
            }
        } else {
            guard factor.isConfirmed else { throw fail(SecondFactorRefusal.noFactor) }
            guard let digest = RecoveryCode.digest(of: code) else { throw fail(SecondFactorRefusal.recoveryCodeInvalid) }
            proof = .recoveryCode(digest: digest)
        }
        switch try await secondFactors.store.complete(
            ticket: signIn.digest, in: app.appID, factor: factor.factorID, proof: proof)
        {
        case .completed: break
        case .ticketSpent: throw fail(SecondFactorRefusal.ticketSpent)
        case .proofSpent:
            throw fail(kind == SecondFactors.totpType ? SecondFactorRefusal.codeReplayed : SecondFactorRefusal.recoveryCodeInvalid)
        }

        var methods = signIn.methods
        for method in [AuthenticationMethods.oneTimeCode, AuthenticationMethods.multipleFactors] where !methods.contains(method) { methods.append(method) }
        let identity = VerifiedIdentity(userID: signIn.userID, profile: signIn.profile)
        let grant = TokenGrant(app: app, identity: identity, nonce: signIn.nonce, issuedAt: issuedAt, methods: methods)
        let minter = try await minterForAProvenUser(asked, for: grant, &attempt)
        var issued = issuedRow(attempt, userID: signIn.userID, minter: minter, profile: asked.profile)
        issued.detail["first_factor"] = signIn.credentialType
        let started = app.sessions.map { settings in
            sessions.start(
                for: identity, in: app, credentialType: signIn.credentialType, methods: methods,
                deviceLabel: signIn.deviceLabel ?? asked.tokenRequest.deviceLabel, settings: settings)
        }
        if let started { issued.detail["session_id"] = started.issued.sessionID.lowercasedText }
        let signing = signatures(of: [grant], by: minter, asked)
        try await succeed(&attempt, recording: issued, changing: started.map { .start($0.change) }, signing: signing)
        if let started, let firstFactor {
            try await endIfLapsed(started.issued, of: identity, verifier: firstFactor, app: app, &attempt)
        }
        return Ready(issued: issued, signatures: signing, session: started?.issued)
    }
}
