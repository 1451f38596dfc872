/// The session changes a ledger batch makes beside its counters and audit
/// rows (``GatewayCore/SessionChange``), as common table expressions of
/// ``LedgerWriteStatement``. Each names its request (its place in the batch,
/// from 1) as the counter touches do:
///
/// - `rotated`: a refresh token spent for its successor, only while its
///   generation and digest are the live ones, the session is live, and no
///   verdict of its request refused; returns the requests it was made for.
///   Two requests spending one token in one batch: one of them wins.
/// - `started`: new sessions, for requests no verdict refused; then
///   `trimmed` ends the user's oldest live sessions past the app's maximum
///   (the new ones are not seen yet: at most the maximum, and a few more
///   when several start for one user in one batch).
/// - `revoked`: sessions ended whatever the verdicts (a reuse detected);
///   returns the requests whose session was live.
///
/// No session is changed twice in a statement: a session revoked in it is
/// neither rotated nor trimmed, and one rotated is not trimmed.
enum SessionChangesSQL {
    /// The rotations' parameters from `$first`: app, session, generation (the
    /// spent one), the spent token's digest, the successor's, the idle
    /// timeout in seconds, the request.
    static let rotationParameterCount = 7
    /// The starts': app, session, user, profile (JSON text), credential type,
    /// methods (space-separated), device label ('' for none), the first
    /// token's digest, idle timeout, lifetime, maximum per user, the request.
    static let startParameterCount = 12
    /// The revocations': app, session, reason, the request.
    static let revocationParameterCount = 4

    /// The expressions, after `verdicts` (``GatewayCore/SlidingWindowSQL``)
    /// in the same `WITH`: `rotations`, `starts` and `revocations` unnest
    /// their parameters, from `first` on.
    /// `retrying`: a session already started (by an earlier attempt at the
    /// same batch) is left as it is, and a rotation already made (the live
    /// token is the successor this one computed, the spent one is its
    /// predecessor) counts as made: an attempt that timed out but committed
    /// is the gateway's own work, never the client's reuse, whatever the
    /// app's grace (issue 76.8).
    static func expressions(from first: Int, retrying: Bool = false) -> String {
        let r = first
        let s = first + rotationParameterCount
        let v = s + startParameterCount
        return """
            refused AS (SELECT DISTINCT request FROM verdicts WHERE NOT allowed),
            rotations AS (
                SELECT * FROM unnest($\(r)::uuid[], $\(r + 1)::uuid[], $\(r + 2)::int8[], $\(r + 3)::bytea[], $\(r + 4)::bytea[],
                                     $\(r + 5)::int8[], $\(r + 6)::int8[])
                    AS r(app_id, session_id, generation, token_sha256, successor_sha256, idle, request)
                WHERE r.request NOT IN (SELECT request FROM refused)
            ),
            starts AS (
                SELECT * FROM unnest($\(s)::uuid[], $\(s + 1)::uuid[], $\(s + 2)::text[], $\(s + 3)::text[], $\(s + 4)::text[],
                                     $\(s + 5)::text[], $\(s + 6)::text[], $\(s + 7)::bytea[], $\(s + 8)::int8[], $\(s + 9)::int8[],
                                     $\(s + 10)::int8[], $\(s + 11)::int8[])
                    AS n(app_id, session_id, user_id, profile, credential_type, methods, device_label, token_sha256, idle,
                         lifetime, maximum, request)
                WHERE n.request NOT IN (SELECT request FROM refused)
            ),
            revocations AS (
                SELECT * FROM unnest($\(v)::uuid[], $\(v + 1)::uuid[], $\(v + 2)::text[], $\(v + 3)::int8[])
                    AS v(app_id, session_id, reason, request)
            ),
            revoked AS (
                UPDATE sessions s SET revoked_at = now(), revoked_reason = v.reason
                FROM revocations v
                WHERE s.app_id = v.app_id AND s.session_id = v.session_id AND s.revoked_at IS NULL
                RETURNING v.request
            ),
            \(retrying ? "rotated_now" : "rotated") AS (
                UPDATE sessions s SET generation = s.generation + 1, token_sha256 = r.successor_sha256,
                    previous_sha256 = s.token_sha256, rotated_at = clock_timestamp(), last_used_at = now(),
                    idle_expires_at = least(now() + r.idle * interval '1 second', s.expires_at)
                FROM rotations r
                WHERE s.app_id = r.app_id AND s.session_id = r.session_id AND s.generation = r.generation
                    AND s.token_sha256 = r.token_sha256 AND s.revoked_at IS NULL AND s.expires_at > now()
                    AND s.idle_expires_at > now()
                    AND (s.app_id, s.session_id) NOT IN (SELECT app_id, session_id FROM revocations)
                RETURNING r.request
            ),
            \(retrying ? Self.rotatedBefore : "")
            started AS (
                INSERT INTO sessions (app_id, session_id, user_id, profile, credential_type, methods, auth_time, device_label,
                                      created_at, last_used_at, idle_expires_at, expires_at, generation, token_sha256)
                SELECT n.app_id, n.session_id, n.user_id, n.profile::jsonb, n.credential_type,
                       coalesce(string_to_array(nullif(n.methods, ''), ' '), '{}'), now(), nullif(n.device_label, ''), now(), now(),
                       now() + least(n.idle, n.lifetime) * interval '1 second', now() + n.lifetime * interval '1 second',
                       0, n.token_sha256
                FROM starts n
                \(retrying ? "ON CONFLICT (app_id, session_id) DO NOTHING" : "")
            ),
            trimmed AS (
                UPDATE sessions s SET revoked_at = now(), revoked_reason = 'session_limit'
                FROM (
                    SELECT live.app_id, live.session_id, n.maximum,
                           row_number() OVER (PARTITION BY live.app_id, live.user_id
                                              ORDER BY live.created_at DESC, live.session_id) AS newest
                    FROM (SELECT DISTINCT app_id, user_id, maximum FROM starts) n
                    JOIN sessions live ON live.app_id = n.app_id AND live.user_id = n.user_id
                        AND live.revoked_at IS NULL AND live.expires_at > now() AND live.idle_expires_at > now()
                ) old
                WHERE old.newest >= old.maximum AND s.app_id = old.app_id AND s.session_id = old.session_id
                    AND (s.app_id, s.session_id) NOT IN (SELECT app_id, session_id FROM revocations)
                    AND (s.app_id, s.session_id) NOT IN (SELECT app_id, session_id FROM rotations)
            )
            """
    }

    /// The retry form's rotations: those this statement makes, and those
    /// already made as this one would have made them.
    static let rotatedBefore = """
        rotated_before AS (
            SELECT r.request FROM rotations r
            JOIN sessions s ON s.app_id = r.app_id AND s.session_id = r.session_id
            WHERE s.generation = r.generation + 1 AND s.token_sha256 = r.successor_sha256
                AND s.previous_sha256 = r.token_sha256 AND s.revoked_at IS NULL
                AND (s.app_id, s.session_id) NOT IN (SELECT app_id, session_id FROM revocations)
        ),
        rotated AS (SELECT request FROM rotated_now UNION ALL SELECT request FROM rotated_before),
        """
}
