-- soak.lua - the soak bench's wrk script (bench/soak/README.md): a different request at every call.
--
-- wrk -s soak.lua <url> -- <count file> <traffic> <valid tokens, comma list> <outsider token>
--   count file  this thread writes "<responses> <2xx> <3xx> <4xx> <5xx> <404>" to <count file>.<thread> every
--               COUNT_EVERY answers, so the harness reads the requests answered so far while wrk runs
--   traffic     "varied": the mix below; "same": GET /bench/ with the first token, every time
--
-- The varied mix, per call (percentages of the calls):
--   60  /bench/<path>   a valid token (one of several accounts): 200 through the protected route
--   14  /jwt/<path>     a valid token: 200 through a route forwarding a signed JWT (the identity signer's cache),
--                       half of them with a Host of their own (tenant<n>.example.com: the JWT's issuer)
--    6  /open/<path>    no token: 200 through a public route
--    6  /bench/<path>   an unknown token of the gateway's shape (mk_ + 43 characters): 401
--    3  /bench/<path>   the token of an account without the route's role: 403
--    3  /bench/<path>   no credential, or a credential that is not the gateway's: 401
--    8  /<word>-<n>/... no route: 404
-- Paths are many shapes with identifier-like segments (numbers, UUIDs, hex, dates, e-mails, names
-- under collection words and under non-plural words, literals that fold after their fourth value, paths
-- deeper than the metrics' depth limit); half of them carry a query string with a user name, an e-mail
-- address and a postal address. About 10 % are POSTs with a JSON body of 50 B to 4 KiB. No HEAD: wrk reads every
-- answer as a GET's and waits for the body a HEAD answer announces but never sends (run.mjs sends the HEADs).

local COUNT_EVERY = 500

local count_file, traffic, outsider
local tokens = {}
local same_request
local answered, by_class, not_found = 0, { 0, 0, 0, 0, 0 }, 0

local WORDS = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
  "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango" }
local NAMES = { "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar" }
local STREETS = { "Main+Street", "High+Road", "Rue+de+la+Paix", "Baker+Street", "Elm+Avenue", "Station+Road" }
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

local random = math.random
local fmt = string.format

local function pick(t) return t[random(#t)] end
local function hex(n)
  local s = {}
  for i = 1, n do s[i] = fmt("%x", random(0, 15)) end
  return table.concat(s)
end
local function uuid() return fmt("%s-%s-4%s-%s-%s", hex(8), hex(4), hex(3), hex(4), hex(12)) end
local function b64(n)
  local s = {}
  for i = 1, n do local k = random(64); s[i] = B64:sub(k, k) end
  return table.concat(s)
end
local function name() return pick(NAMES) .. random(1, 100000) end

-- A service path: the shapes a real API sees, with what identifies a caller or an object in it.
local SHAPES = {
  function() return fmt("/users/%d/orders/%s", random(1, 1e7), uuid()) end,
  function() return fmt("/items/%s", hex(24)) end,
  function() return fmt("/v1/accounts/%d/profile", random(1, 1e6)) end,
  function() return fmt("/catalog/%s/%d", pick(WORDS), random(1, 1e5)) end,        -- 20 literals: folds after 3
  function() return fmt("/reports/%04d-%02d-%02d/summary", random(2000, 2030), random(1, 12), random(1, 28)) end,
  function() return fmt("/files/%s/%s.txt", hex(16), pick(WORDS)) end,
  function() return fmt("/users/%s", name()) end,                                      -- a name under a plural
  function() return fmt("/profile/%s", name()) end,                                    -- a name under no plural
  function() return fmt("/people/%s@example.com/settings", name()) end,
  function() return fmt("/a/%d/b/%s/c/%d", random(1, 1e4), hex(10), random(1, 1e4)) end,
  function() return fmt("/%s%d/status", pick(WORDS), random(1, 50)) end,              -- a top-level literal that varies
  function() return fmt("/sessions/%s", b64(43)) end,
  function() return fmt("/hosts/10.%d.%d.%d/metrics", random(0, 255), random(0, 255), random(0, 255)) end,
  function()                                                                          -- deeper than 16 segments
    local s = {}
    for i = 1, random(17, 24) do s[i] = (i % 2 == 0) and tostring(random(1, 1e6)) or pick(WORDS) end
    return "/" .. table.concat(s, "/")
  end,
  function() return "/" end,
  function() return fmt("/search/%s", pick(WORDS)) end,
}

local function query()
  if random() < 0.5 then return "" end
  local who = name()
  return fmt("?user=%s&email=%s%%40example.com&address=%d+%s&page=%d&session=%s",
    who, who, random(1, 999), pick(STREETS), random(1, 500), hex(32))
end

local function body()
  local n = random(50, 4096)
  local who = name()
  local head = fmt('{"user":"%s","email":"%s@example.com","address":"%d %s","note":"', who, who, random(1, 999), pick(STREETS))
  return head .. string.rep("x", math.max(0, n - #head - 2)) .. '"}'
end

init = function(args)
  count_file = (args[1] or "/dev/null") .. "." .. (tid or 1)
  traffic = args[2] or "varied"
  for t in string.gmatch(args[3] or "", "[^,]+") do tokens[#tokens + 1] = t end
  outsider = args[4]
  if #tokens == 0 then error("soak.lua: no valid token given") end
  math.randomseed(os.time() * 1000 + (tid or 1) * 7919)
  same_request = wrk.format("GET", "/bench/", { ["Authorization"] = "Bearer " .. tokens[1] })
end

setup = function(thread)
  nthreads = (nthreads or 0) + 1
  thread:set("tid", nthreads)
end

request = function()
  if traffic == "same" then return same_request end
  local headers = {}
  local path
  local r = random(100)
  if r <= 60 then
    path = "/bench" .. pick(SHAPES)() .. query()
    headers["Authorization"] = "Bearer " .. pick(tokens)
  elseif r <= 74 then
    path = "/jwt" .. pick(SHAPES)() .. query()
    headers["Authorization"] = "Bearer " .. pick(tokens)
    -- Half under a name of their own: the JWT's issuer is the request's host until public names are declared.
    if random() < 0.5 then headers["Host"] = fmt("tenant%d.example.com", random(1, 1e6)) end
  elseif r <= 80 then
    path = "/open" .. pick(SHAPES)() .. query()
  elseif r <= 86 then
    path = "/bench" .. pick(SHAPES)() .. query()
    headers["Authorization"] = "Bearer mk_" .. b64(43)
  elseif r <= 89 then
    path = "/bench" .. pick(SHAPES)() .. query()
    headers["Authorization"] = "Bearer " .. outsider
  elseif r <= 92 then
    path = "/bench" .. pick(SHAPES)()
    if random() < 0.5 then headers["Authorization"] = "Basic " .. b64(24) end
  else
    path = fmt("/%s-%d", pick(WORDS), random(1, 1e6)) .. pick(SHAPES)() .. query()
  end
  headers["X-Request-Id"] = uuid()
  local m = random(100)
  if m <= 10 then
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", path, headers, body())
  end
  return wrk.format("GET", path, headers)
end

response = function(status, headers, body)
  answered = answered + 1
  local c = math.floor(status / 100)
  if c >= 1 and c <= 5 then by_class[c] = by_class[c] + 1 end
  if status == 404 then not_found = not_found + 1 end
  if answered % COUNT_EVERY == 0 then
    -- Written aside, then renamed: the harness never reads a file half written.
    local f = io.open(count_file .. ".tmp", "w")
    if f then
      f:write(fmt("%d %d %d %d %d %d\n", answered, by_class[2], by_class[3], by_class[4], by_class[5], not_found))
      f:close()
      os.rename(count_file .. ".tmp", count_file)
    end
  end
end
