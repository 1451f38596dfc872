-- Linking a verified email to a password user (link_verified_email) is each
-- provider's setting now, not the app's: turned on for a company's own directory,
-- it no longer links Google's or Apple's emails too. An app that had it on keeps
-- what it did: each of its providers gets the setting, for the operator to turn
-- off where a provider does not control its users' addresses.
UPDATE apps SET plugins = jsonb_set(
        plugins #- '{id_token,link_verified_email}', '{id_token,providers}',
        (SELECT coalesce(jsonb_agg(
                    CASE WHEN jsonb_typeof(plugins -> 'id_token' -> 'link_verified_email') = 'string'
                         THEN provider || jsonb_build_object('link_verified_email', plugins -> 'id_token' -> 'link_verified_email')
                         ELSE provider END
                    ORDER BY position), '[]'::jsonb)
         FROM jsonb_array_elements(plugins -> 'id_token' -> 'providers') WITH ORDINALITY AS entry(provider, position)))
WHERE plugins -> 'id_token' ? 'link_verified_email'
  AND jsonb_typeof(plugins -> 'id_token' -> 'providers') = 'array';
