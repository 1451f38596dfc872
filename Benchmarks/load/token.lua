-- wrk script: POST /v1/identity_tokens with a fresh nonce each time and
-- user ids cycling over 1000 users. APP_ID names the app; CREDENTIALS, when
-- set, is the JSON of the credentials object. With PASSWORD_APP_ID and
-- PASSWORD_EVERY=n, every n-th request is a password login to that app.
-- RANDOM_APP_ID=1 names a made-up app id in every request instead;
-- APP_IDS_FILE, one app id a line, spreads the requests over those apps.
-- TOKEN_PROFILE, when set, is the token profile every request asks for.
-- REFRESH=1 answers each request with a session's refresh token instead: a
-- thread keeps the refresh tokens its answers carried, each request spends
-- one (and its answer brings the successor), and a request with none at hand
-- signs in, which starts a session; so each connection soon refreshes its own.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local app = os.getenv("APP_ID")
local credentials = os.getenv("CREDENTIALS")
local password_app = os.getenv("PASSWORD_APP_ID")
local password_every = tonumber(os.getenv("PASSWORD_EVERY") or "0")
local random_app = os.getenv("RANDOM_APP_ID") == "1"
local app_ids_file = os.getenv("APP_IDS_FILE")
local profile = os.getenv("TOKEN_PROFILE")
local password_credentials = '{"type":"password","password":"load test password"}'
local refresh = os.getenv("REFRESH") == "1"
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
end

function init(args)
  sequence = 0
  refresh_tokens = {}
  math.randomseed(os.time() + (thread_id or 0))
  app_ids = {}
  if app_ids_file then
    for line in io.lines(app_ids_file) do
      if #line > 0 then table.insert(app_ids, line) end
    end
  end
end

request = function()
  sequence = sequence + 1
  local refresh_token = refresh and table.remove(refresh_tokens)
  if refresh_token then
    return wrk.format(nil, nil, nil, string.format(
      '{"app_id":"%s","nonce":"n%d-%d-%d","credentials":{"type":"refresh_token","refresh_token":"%s"}}',
      app, thread_id or 0, sequence, math.random(1000000000), refresh_token))
  end
  local target, creds = app, credentials
  if #app_ids > 0 then
    target = app_ids[math.random(#app_ids)]
  elseif random_app then
    target = string.format("%08x-%04x-4%03x-8%03x-%012x", math.random(0, 0x7fffffff), math.random(0, 0xffff),
      math.random(0, 0xfff), math.random(0, 0xfff), math.random(0, 0xffffffff))
  end
  if password_app and password_every > 0 and sequence % password_every == 0 then
    target, creds = password_app, password_credentials
  end
  local body = string.format('{"app_id":"%s","user_id":"user%d","nonce":"n%d-%d-%d"%s%s}',
    target, sequence % 1000, thread_id or 0, sequence, math.random(1000000000),
    creds and (',"credentials":' .. creds) or "", profile and (',"token_profile":"' .. profile .. '"') or "")
  return wrk.format(nil, nil, nil, body)
end

if refresh then
  response = function(status, headers, body)
    local token = string.match(body, '"refresh_token":"(rt1%.[%w_%-]+)"')
    if token then table.insert(refresh_tokens, token) end
  end
end
