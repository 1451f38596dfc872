-- wrk script: POST /v1/identity_tokens with a fresh nonce each time and
-- user ids cycling over 1000 users. APP_ID names the app; CREDENTIALS, when
-- set, is the JSON of the credentials object.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local app = os.getenv("APP_ID")
local credentials = os.getenv("CREDENTIALS")
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
end

function init(args)
  sequence = 0
  math.randomseed(os.time() + (thread_id or 0))
end

request = function()
  sequence = sequence + 1
  local body = string.format('{"app_id":"%s","user_id":"user%d","nonce":"n%d-%d-%d"%s}',
    app, sequence % 1000, thread_id or 0, sequence, math.random(1000000000),
    credentials and (',"credentials":' .. credentials) or "")
  return wrk.format(nil, nil, nil, body)
end
