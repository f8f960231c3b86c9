#!lua name=cb_fleet
-- The fleet's arbiter: one breaker shared by many processes, kept in Redis. Processes never
-- send a time (every instant here is Redis TIME), so their clocks may disagree by minutes
-- without moving a cool-down. Every function is O(buckets) at most, whatever the call rate or
-- the fleet's size, except the quorum count and the member list, which read one entry per
-- instance and run only when a trip is due or a process asks for the list.
--
-- Versioning: the library keeps one name and puts the version in its function names. Redis
-- refuses a second library that registers a name another library has, even with REPLACE, so a
-- new protocol (cb_fleet_v2_sync) ships as a new function in this library, next to v1 while
-- older processes still call it.
--
-- Keys, all under one hash tag so a cluster keeps them in one slot:
--   KEYS[1] {cb:NAME}:s  the state (a hash, fields below)
--   KEYS[2] {cb:NAME}:w  the window: a ring of `buckets` buckets, fields e<i> c<i> f<i> s<i>
--   KEYS[3] {cb:NAME}:f  instance -> the newest bucket in which it reported a failure or a slow call
--   KEYS[4] {cb:NAME}:m  instance -> the Redis time it last reported (the fleet's members)
--   KEYS[5] {cb:NAME}:q  instance -> "token seq gen ok bad": what of its reports is applied
--
-- A report whose answer never came (a timeout) may still have run, so every report is safe to
-- run twice: batches carry a sequence number and run once each, and trial results are sent as
-- running totals for their generation, of which only the growth counts. The token is the
-- sending process's own (made at its start), so a new process that reuses a name starts afresh.
-- State changes are published on "{cb:NAME}:events" as "<state> <generation> <ms left>".

local function now_ms()
  local t = redis.call('TIME')
  local sec, usec = tonumber(t[1]), tonumber(t[2])
  return sec * 1000 + math.floor(usec / 1000), usec
end

-- The options every process of the fleet sends: "window_ms,buckets,min_calls,rate,slow_rate,
-- quorum,cooldown_ms,multiplier,cap_ms,jitter,permits,lease_ms,member_ttl_ms". Rates are
-- percentages (0 = rule off). The first process to call stores them; a process with other
-- options is refused, so one misconfigured deploy cannot change the fleet's rules unseen.
local CFG = {'window_ms', 'buckets', 'min_calls', 'rate', 'slow_rate', 'quorum', 'cooldown_ms',
             'multiplier', 'cap_ms', 'jitter', 'permits', 'lease_ms', 'member_ttl_ms'}

local function parse_cfg(text)
  local c, n = {}, 0
  for x in string.gmatch(text, '[^,]+') do
    n = n + 1
    local v = tonumber(x)
    if v == nil or CFG[n] == nil then return nil end
    c[CFG[n]] = v
  end
  if n ~= #CFG or c.buckets < 1 or c.window_ms < c.buckets or c.permits < 1 then return nil end
  return c
end

local STATE_FIELDS = {'gen', 'until', 'cd', 'k', 'left', 'granted', 'ok', 'bad', 'lease_until',
                      'trips', 'closes', 'expired', 'trials'}

-- A breaker Redis has no state for (new, or a Redis restarted without persistence) starts at
-- generation "now in ms": above any it can have had before, as long as it made fewer than one
-- transition a millisecond, so a process's tickets from before the restart stay late.
local function load_state(key, cfg_text, now)
  local raw = redis.call('HGETALL', key)
  local s = {}
  for i = 1, #raw, 2 do s[raw[i]] = raw[i + 1] end
  if s.st == nil then
    s = {st = 'c', cfg = cfg_text}
    for _, f in ipairs(STATE_FIELDS) do s[f] = 0 end
    s.gen = now
    return s
  end
  if s.cfg ~= cfg_text then return nil, s.cfg end
  for _, f in ipairs(STATE_FIELDS) do s[f] = tonumber(s[f] or 0) end
  return s
end

local function save_state(key, s)
  local args = {'st', s.st, 'cfg', s.cfg}
  for _, f in ipairs(STATE_FIELDS) do
    args[#args + 1] = f
    args[#args + 1] = string.format('%d', s[f])
  end
  redis.call('HSET', key, unpack(args))
end

local function publish(keys, s, now)
  local left = 0
  if s.st == 'o' then left = s['until'] - now end
  redis.call('PUBLISH', string.sub(keys[1], 1, -3) .. ':events',
             s.st .. ' ' .. string.format('%d', s.gen) .. ' ' .. string.format('%d', left))
end

-- A new state always starts with empty counts: the window of a CLOSED period, the trials of a
-- HALF_OPEN one.
local function clear_counts(keys, s)
  redis.call('DEL', keys[2], keys[3])
  s.left, s.granted, s.ok, s.bad, s.lease_until = 0, 0, 0, 0, 0
end

-- The k-th failed trial in a row (k = 0 for a trip out of CLOSED) waits min(base * m^k, cap),
-- lengthened by up to jitter of itself, never shortened: the cool-down is a promise of quiet
-- to the dependency. The random part comes from TIME's microseconds and the generation, so
-- two trips never share it by construction. Worked numbers: base 30000, jitter 0.2, u 0.5 ->
-- 30000 + 30000 * 0.2 * 0.5 = 33000 ms.
local function trip(keys, s, c, now, usec, after_trial)
  local k = 0
  if after_trial then k = s.k + 1 end
  local base = c.cooldown_ms
  if c.multiplier > 1 and k > 0 then
    base = base * c.multiplier ^ k
    if base > c.cap_ms then base = c.cap_ms end
  end
  local u = ((usec * 2654435761 + s.gen * 40503) % 1000003) / 1000003
  local cd = math.floor(base + base * c.jitter * u + 0.5)
  s.st, s.k, s.cd = 'o', k, cd
  s.gen = s.gen + 1
  s['until'] = now + cd
  s.trips = s.trips + 1
  clear_counts(keys, s)
  publish(keys, s, now)
end

local function close(keys, s, now)
  s.st, s.k, s.cd = 'c', 0, 0
  s.gen = s.gen + 1
  s['until'] = 0
  s.closes = s.closes + 1
  clear_counts(keys, s)
  publish(keys, s, now)
end

-- The rules that run on time alone, at the start of every call.
local function advance(keys, s, c, now, usec)
  if s.st == 'o' and now >= s['until'] then
    s.st = 'h'
    s.gen = s.gen + 1
    clear_counts(keys, s)
    s.left = c.permits
    publish(keys, s, now)
  end
  -- A permit not settled by its lease's end counts as a failed trial: a process killed while
  -- holding one can neither pin the breaker HALF_OPEN nor free its permit for an (M+1)th trial.
  if s.st == 'h' and s.granted > s.ok + s.bad and now >= s.lease_until then
    s.expired = s.expired + (s.granted - s.ok - s.bad)
    trip(keys, s, c, now, usec, true)
  end
end

-- Trial results, for the generation they were admitted in; any other generation's are late
-- and dropped. Any failure reopens; M successes close.
local function settle(keys, s, c, now, usec, gen, ok, bad)
  if s.st ~= 'h' or gen ~= s.gen or ok + bad == 0 then return end
  local room = s.granted - s.ok - s.bad
  if ok > room then ok = room end
  if bad > room - ok then bad = room - ok end
  s.ok, s.bad = s.ok + ok, s.bad + bad
  if s.bad > 0 then
    trip(keys, s, c, now, usec, true)
  elseif s.ok >= c.permits then
    close(keys, s, now)
  end
end

local function bucket_width(c) return math.floor(c.window_ms / c.buckets) end

-- Counts made `age` ms ago (on the sender's own clock: a duration, not a time, so no skew) go
-- to the bucket of now - age; counts older than the window are past judging and dropped.
local function add_counts(keys, s, c, now, instance, batches)
  local width = bucket_width(c)
  local newest = math.floor(now / width)
  local w = {}
  local raw = redis.call('HGETALL', keys[2])
  for i = 1, #raw, 2 do w[raw[i]] = tonumber(raw[i + 1]) end
  local failed_in = -1
  for _, b in ipairs(batches) do
    local age, calls, fails, slow = b[1], b[2], b[3], b[4]
    local idx = math.floor((now - age) / width)
    if age >= 0 and idx > newest - c.buckets and calls > 0 then
      local i = idx % c.buckets
      if w['e' .. i] ~= idx then
        w['e' .. i], w['c' .. i], w['f' .. i], w['s' .. i] = idx, 0, 0, 0
      end
      w['c' .. i] = w['c' .. i] + calls
      w['f' .. i] = w['f' .. i] + fails
      w['s' .. i] = w['s' .. i] + slow
      if (fails > 0 or slow > 0) and idx > failed_in then failed_in = idx end
    end
  end
  local args = {}
  for f, v in pairs(w) do
    args[#args + 1] = f
    args[#args + 1] = string.format('%d', v)
  end
  if #args > 0 then redis.call('HSET', keys[2], unpack(args)) end
  if failed_in >= 0 then
    local before = tonumber(redis.call('HGET', keys[3], instance) or -1)
    if failed_in > before then redis.call('HSET', keys[3], instance, failed_in) end
  end
  return w, newest
end

local function judge(keys, s, c, now, usec, w, newest)
  local calls, fails, slow = 0, 0, 0
  for i = 0, c.buckets - 1 do
    local e = w['e' .. i]
    if e ~= nil and e > newest - c.buckets then
      calls, fails, slow = calls + w['c' .. i], fails + w['f' .. i], slow + w['s' .. i]
    end
  end
  if calls < c.min_calls or calls == 0 then return end
  local over = (c.rate > 0 and fails * 100 >= c.rate * calls) or
               (c.slow_rate > 0 and slow * 100 >= c.slow_rate * calls)
  if not over then return end
  if c.quorum > 1 then
    -- One instance with a broken path must not open the fleet's breaker alone.
    local raw, n = redis.call('HGETALL', keys[3]), 0
    for i = 2, #raw, 2 do
      if tonumber(raw[i]) > newest - c.buckets then n = n + 1 end
    end
    if n < c.quorum then return end
  end
  trip(keys, s, c, now, usec, false)
end

local function members(keys, c, now)
  local raw, out, gone = redis.call('HGETALL', keys[4]), {}, {}
  for i = 1, #raw, 2 do
    if now - tonumber(raw[i + 1]) <= c.member_ttl_ms then
      out[#out + 1] = raw[i]
    else
      gone[#gone + 1] = raw[i]
    end
  end
  if #gone > 0 then
    redis.call('HDEL', keys[4], unpack(gone))
    redis.call('HDEL', keys[5], unpack(gone))
  end
  return out
end

local function int_arg(args, i, name)
  local v = tonumber(args[i])
  if v == nil or v ~= math.floor(v) or v < 0 then
    return nil, redis.error_reply('ERR cb_fleet: argument ' .. i .. ' (' .. name .. '): expected a whole number >= 0')
  end
  return v
end

-- One round trip a reporting interval:
--   ARGV: options, instance, token, counts_generation, want_members, settle_generation,
--         settle_ok, settle_bad (running totals), want_permits, n, then n batches of
--         (age_ms, calls, failures, slow, seq).
--   Counts are added only if counts_generation is the current CLOSED one (a count made in an
--   earlier state is late). want_permits > 0 asks for that many trial permits (HALF_OPEN).
-- Answers {state, generation, ms_left, permits_granted, members_count, cool-down_ms, members,
-- now_ms} with state one of "closed", "open", "half_open", members listed only when asked, and
-- Redis's time (processes count on from it when Redis is away, to agree on whose turn it is).
local NAMES = {c = 'closed', o = 'open', h = 'half_open'}

local function sync(keys, args)
  local c = parse_cfg(args[1] or '')
  if c == nil then return redis.error_reply('ERR cb_fleet: options: expected ' .. #CFG .. ' numbers (' .. table.concat(CFG, ',') .. ')') end
  local now, usec = now_ms()
  local s, theirs = load_state(keys[1], args[1], now)
  if s == nil then
    return redis.error_reply('ERR cb_fleet: options differ from the fleet\'s: ' .. args[1] .. ' against ' .. theirs)
  end
  local instance, token = args[2], args[3]
  if instance == nil or instance == '' then return redis.error_reply('ERR cb_fleet: argument 2 (instance): expected a name') end
  if token == nil or token == '' or string.find(token, ' ') then
    return redis.error_reply('ERR cb_fleet: argument 3 (token): expected a word')
  end
  local nums, err = {}, nil
  local names = {'counts_generation', 'want_members', 'settle_generation', 'settle_ok', 'settle_bad', 'want_permits', 'batches'}
  for i, name in ipairs(names) do
    nums[name], err = int_arg(args, i + 3, name)
    if err then return err end
  end
  if #args ~= 10 + 5 * nums.batches then
    return redis.error_reply('ERR cb_fleet: expected ' .. (10 + 5 * nums.batches) .. ' arguments for ' .. nums.batches .. ' batches, got ' .. #args)
  end
  -- What of this process's reports has run already.
  local q = {token, 0, 0, 0, 0}
  local seen = redis.call('HGET', keys[5], instance)
  if seen then
    local parts = {}
    for x in string.gmatch(seen, '[^ ]+') do parts[#parts + 1] = x end
    if parts[1] == token then q = {token, tonumber(parts[2]), tonumber(parts[3]), tonumber(parts[4]), tonumber(parts[5])} end
  end
  local batches = {}
  for b = 0, nums.batches - 1 do
    local one = {}
    for j = 1, 5 do
      one[j], err = int_arg(args, 11 + 5 * b + j - 1, 'batch')
      if err then return err end
    end
    if one[5] > q[2] then
      batches[#batches + 1] = one
      q[2] = one[5]
    end
  end
  local settle_ok, settle_bad = nums.settle_ok, nums.settle_bad
  if nums.settle_generation == q[3] then
    settle_ok, settle_bad = math.max(0, settle_ok - q[4]), math.max(0, settle_bad - q[5])
    q[4], q[5] = math.max(q[4], nums.settle_ok), math.max(q[5], nums.settle_bad)
  elseif nums.settle_generation > q[3] then
    q[3], q[4], q[5] = nums.settle_generation, nums.settle_ok, nums.settle_bad
  else
    settle_ok, settle_bad = 0, 0  -- an older generation's: late whatever it says
  end
  redis.call('HSET', keys[5], instance, string.format('%s %d %d %d %d', q[1], q[2], q[3], q[4], q[5]))

  redis.call('HSET', keys[4], instance, string.format('%d', now))
  advance(keys, s, c, now, usec)
  settle(keys, s, c, now, usec, nums.settle_generation, settle_ok, settle_bad)
  if s.st == 'c' and nums.counts_generation == s.gen and #batches > 0 then
    local w, newest = add_counts(keys, s, c, now, instance, batches)
    judge(keys, s, c, now, usec, w, newest)
  end
  local granted = 0
  if s.st == 'h' and nums.want_permits > 0 and s.left > 0 then
    granted = math.min(nums.want_permits, s.left)
    s.left = s.left - granted
    s.granted = s.granted + granted
    s.trials = s.trials + granted
    s.lease_until = now + c.lease_ms
  end
  save_state(keys[1], s)
  -- A breaker nobody has called for a day has a state that means nothing any more (and the
  -- scene makes a name per run): its keys go then.
  for i = 1, 5 do redis.call('PEXPIRE', keys[i], 86400000) end
  local left = 0
  if s.st == 'o' then left = s['until'] - now end
  local list = {}
  if nums.want_members > 0 then list = members(keys, c, now) end
  return {NAMES[s.st], s.gen, left, granted, redis.call('HLEN', keys[4]), s.cd, list, now}
end

-- For people and tools: the state hash as it is, never changed (allowed on replicas).
local function status(keys, args)
  return redis.call('HGETALL', keys[1])
end

redis.register_function('cb_fleet_v1_sync', sync)
redis.register_function{function_name = 'cb_fleet_v1_status', callback = status, flags = {'no-writes'}}
