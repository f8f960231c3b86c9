#!lua name=cb_queue
-- The grading queue's rules, each a function Redis runs whole, so no two workers ever see a job
-- half-changed. Delivery on streams is at-least-once (a worker presumed dead may still finish);
-- these functions make the gradebook exactly-once: a job is done by its owner once, and every
-- later completion is recorded as an attempt and compared with the first, never taken instead.
--
-- Keys of a queue, all under one hash tag (KEYS[1] is the prefix "{cbq:NAME}"):
--   P:meta          hash: stamp (what every grade depends on), class
--   P:sub           hash: student -> their current job (the one they handed in last); the student
--                   is `who`, their id by the id rule (lower case), as the roster or folder says it
--                   in the job's `student`
--   P:folders       hash: folder -> its newest job, so that a folder superseded has its row too
--   P:job:ID        hash: name student content files lane entry state owner deliveries last_error
--                         result verdict by done_ms nondeterministic superseded_by handed_in
--   P:n             hash: state -> how many jobs are in it (queued running done dead superseded
--                         refused)
--   P:interactive   stream, P:bulk stream: "job ID" entries, read by the group "workers"
--   P:content:SHA   set: the submissions whose files are these bytes
--   P:attempts      list: completions that came after the first, as JSON
--   P:dead          stream: jobs given up after max_deliveries, and why
--   P:finished      sorted set: job -> the ms it was done (throughput)
-- Blobs (P:blob:SHA) are written by the clients with SET NX, not here.

local GROUP = 'workers'
-- The numbers of the rules (deliveries, heartbeats) are the clients' (queue.h), passed in: each
-- is written once.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function lane_key(p, lane) return p .. ':' .. lane end

local function ensure_group(p, lane)
  local ok = pcall(redis.call, 'XGROUP', 'CREATE', lane_key(p, lane), GROUP, '0', 'MKSTREAM')
  return ok
end

-- Every change of a job's state goes through here, so P:n always adds up.
local function set_state(p, job, from, to)
  if from == to then return end
  if from and from ~= '' then redis.call('HINCRBY', p .. ':n', from, -1) end
  redis.call('HINCRBY', p .. ':n', to, 1)
  redis.call('HSET', job, 'state', to)
end

-- The queue's stamp, kept by its first push or refusal: nil when `stamp` is it (or now is), else
-- the kept one, which another grading may not push to.
local function keep_stamp(p, stamp, class)
  local meta = p .. ':meta'
  local kept = redis.call('HGET', meta, 'stamp')
  if not kept then
    redis.call('HSET', meta, 'stamp', stamp, 'class', class)
  elseif kept ~= stamp then
    return kept
  end
  return nil
end

-- Whether hand-in key `a` is later than `b`: byte order, as the grader compares them (handed_in.h:
-- the time, zero-padded, then the folder's name). Not Lua's `>`, which follows the locale.
local function later_than(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- The student's current job when it was handed in later than `handed_in`: then the push is of an
-- earlier hand-in, which is never graded (one rule with the batch's).
local function handed_in_later(p, current, id, handed_in)
  if not current or current == id or handed_in == '' then return nil end
  local later = redis.call('HGET', p .. ':job:' .. current, 'handed_in')
  if later and later ~= '' and later_than(later, handed_in) then return current end
  return nil
end

-- `id`, an earlier hand-in than the student's current job `newer`: kept as superseded by it, never queued.
local function keep_older(p, job, state, newer, fields)
  if not state then
    redis.call('HSET', job, unpack(fields))
    set_state(p, job, nil, 'superseded')
  elseif state == 'queued' or state == 'running' then
    set_state(p, job, state, 'superseded')
  end
  redis.call('HSET', job, 'superseded_by', newer)
  return {'older', redis.call('HGET', p .. ':job:' .. newer, 'name') or ''}
end

-- `id` becomes the student's current job; their `current` one, if another, is superseded: its
-- folder's name, when it is another folder (a student's bytes pushed again are no news).
local function supersede(p, student, current, id, name)
  local dropped = nil
  if current and current ~= id then
    local cjob = p .. ':job:' .. current
    local f = redis.call('HMGET', cjob, 'state', 'name')
    if f[1] == 'queued' or f[1] == 'running' then set_state(p, cjob, f[1], 'superseded') end
    redis.call('HSET', cjob, 'superseded_by', id)
    if f[2] and f[2] ~= name then dropped = f[2] end
  end
  redis.call('HSET', p .. ':sub', student, id)
  return dropped
end

-- push(P; name, id, student, content, lane, stamp, class, files, handed_in, who)
--   -> {"new" | "known", the folder this one superseded, if any} | {"same"} | {"older", newer folder}
-- The stamp is the queue's first push's; another is refused ("stamp" and the kept one). A push of
-- a folder handed in before the student's current one is kept as superseded ("older").
local function push(keys, args)
  local p = keys[1]
  local name, id, student, content, lane, stamp, class, files, handed_in, who =
    args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9] or '', args[10] or args[3]
  local kept = keep_stamp(p, stamp, class)
  if kept then return {'stamp', kept} end
  ensure_group(p, 'interactive')
  ensure_group(p, 'bulk')
  redis.call('SADD', p .. ':content:' .. content, name)
  redis.call('HSET', p .. ':folders', name, id)
  local job = p .. ':job:' .. id
  local current = redis.call('HGET', p .. ':sub', who)
  local state = redis.call('HGET', job, 'state')
  if current == id and state then return {'same'} end
  local newer = handed_in_later(p, current, id, handed_in)
  if newer then
    return keep_older(p, job, state, newer, {'name', name, 'student', student, 'content', content, 'lane', lane,
      'entry', '', 'owner', '', 'deliveries', 0, 'last_error', '', 'pushed_ms', now_ms(), 'files', files,
      'handed_in', handed_in})
  end
  local dropped = supersede(p, who, current, id, name)
  if state and state ~= 'superseded' then return {'known', dropped} end
  local entry = redis.call('XADD', lane_key(p, lane), '*', 'job', id)
  redis.call('HSET', job, 'name', name, 'student', student, 'content', content, 'lane', lane, 'entry', entry,
             'owner', '', 'deliveries', 0, 'last_error', '', 'pushed_ms', now_ms(), 'files', files,
             'handed_in', handed_in)
  set_state(p, job, state, 'queued')
  return {'new', dropped}
end

-- refuse(P; name, id, student, why, stamp, class, handed_in, who, kind) -> {"refused"} |
-- {"stamp", kept} | {"older", newer folder}: a folder the push could not take as it is (over the
-- push's limits, unreadable, no student on the roster) is a job that is never delivered, so that
-- the gradebook has its row and says why; unless its student handed in later, as with push. kind
-- "no_submission": a roster's student who handed in nothing, whose row says so.
local function refuse(keys, args)
  local p = keys[1]
  local name, id, student, why, stamp, class, handed_in, who, kind =
    args[1], args[2], args[3], args[4], args[5], args[6], args[7] or '', args[8] or args[3], args[9] or ''
  local kept = keep_stamp(p, stamp, class)
  if kept then return {'stamp', kept} end
  redis.call('HSET', p .. ':folders', name, id)
  local job = p .. ':job:' .. id
  local current = redis.call('HGET', p .. ':sub', who)
  local state = redis.call('HGET', job, 'state')
  local newer = handed_in_later(p, current, id, handed_in)
  if newer then
    return keep_older(p, job, state, newer, {'name', name, 'student', student, 'content', '', 'owner', '',
      'deliveries', 0, 'last_error', why, 'pushed_ms', now_ms(), 'handed_in', handed_in})
  end
  supersede(p, who, current, id)
  redis.call('HSET', job, 'name', name, 'student', student, 'content', '', 'owner', '', 'deliveries', 0,
             'last_error', why, 'pushed_ms', now_ms(), 'handed_in', handed_in, 'kind', kind)
  set_state(p, job, state, 'refused')
  return {'refused'}
end

-- repair(P; id) -> "requeued" | "revived" | "ok": a job that is not done but whose entry Redis no
-- longer has (a restart that lost the tail of its log) is given a new one; a dead-lettered job (the
-- machine since mended) is given its deliveries again.
local function repair(keys, args)
  local p, id = keys[1], args[1]
  local job = p .. ':job:' .. id
  local f = redis.call('HMGET', job, 'state', 'lane', 'entry')
  local state, lane, entry = f[1], f[2], f[3]
  if state == 'dead' then
    ensure_group(p, lane)
    local fresh = redis.call('XADD', lane_key(p, lane), '*', 'job', id)
    redis.call('HSET', job, 'entry', fresh, 'owner', '', 'deliveries', 0, 'last_error', '')
    set_state(p, job, state, 'queued')
    return 'revived'
  end
  if state ~= 'queued' and state ~= 'running' then return 'ok' end
  ensure_group(p, lane)
  if #redis.call('XRANGE', lane_key(p, lane), entry, entry) == 1 then return 'ok' end
  local fresh = redis.call('XADD', lane_key(p, lane), '*', 'job', id)
  redis.call('HSET', job, 'entry', fresh, 'owner', '')
  set_state(p, job, state, 'queued')
  return 'requeued'
end

local function dead_letter(p, job, id, lane, entry, why)
  redis.call('XACK', lane_key(p, lane), GROUP, entry)
  redis.call('XADD', p .. ':dead', '*', 'job', id, 'why', why)
  redis.call('HSET', job, 'owner', '', 'last_error', why)
  set_state(p, job, redis.call('HGET', job, 'state'), 'dead')
end

-- Hands `worker` the job of stream entry `entry`, or deals with it and says no: a job no longer
-- to be graded is acknowledged, one delivered max_deliveries times already is dead-lettered.
local function hand_out(p, lane, entry, jobid, worker, max_deliveries)
  local job = p .. ':job:' .. jobid
  local f = redis.call('HMGET', job, 'state', 'deliveries', 'last_error', 'entry')
  local state, deliveries, last_error, current_entry = f[1], tonumber(f[2] or '0'), f[3], f[4]
  if (state ~= 'queued' and state ~= 'running') or current_entry ~= entry then
    redis.call('XACK', lane_key(p, lane), GROUP, entry)
    return nil
  end
  if deliveries >= max_deliveries then
    local why = last_error
    if not why or why == '' then why = 'its worker stopped answering' end
    dead_letter(p, job, jobid, lane, entry, why .. ' (' .. deliveries .. ' deliveries)')
    return nil
  end
  redis.call('HSET', job, 'owner', worker, 'deliveries', deliveries + 1, 'started_ms', now_ms())
  set_state(p, job, state, 'running')
  return {jobid, lane, entry, tostring(deliveries + 1)}
end

-- How long this Redis has surely been up, in milliseconds. INFO's uptime is the difference of two
-- whole-second clocks, so it can say 1 a moment after the start: one second less is sure.
local function up_ms()
  local info = redis.call('INFO', 'server')
  return ((tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or 0) - 1) * 1000
end

-- take(P; worker, reclaim_ms, max_deliveries) -> {id, lane, entry, delivery} or {} when there is
-- nothing to do.
-- Interactive before bulk, and in each lane a job handed back (fail) or whose owner went silent
-- (idle past reclaim_ms: the missed heartbeats) before a new one. A Redis started again reads
-- its entries' delivery times back from its log, so after an outage every job held looks as
-- silent as a dead worker's: none held is taken back until this Redis has been up reclaim_ms,
-- time for each living owner to beat.
local function take(keys, args)
  local p, worker, reclaim_ms, max_deliveries = keys[1], args[1], args[2], tonumber(args[3])
  local may_reclaim = nil  -- asked of INFO only when a held job is idle enough to take back
  for _, lane in ipairs({'interactive', 'bulk'}) do
    ensure_group(p, lane)
    local key = lane_key(p, lane)
    for _, pending in ipairs(redis.call('XPENDING', key, GROUP, 'IDLE', reclaim_ms, '-', '+', 16)) do
      local entry = pending[1]
      local e = redis.call('XRANGE', key, entry, entry)[1]
      if not e then
        redis.call('XACK', key, GROUP, entry)  -- deleted under the queue: push --resume queues it again
      else
        local handed_back = redis.call('HGET', p .. ':job:' .. e[2][2], 'owner') == ''
        if not handed_back and may_reclaim == nil then may_reclaim = up_ms() >= tonumber(reclaim_ms) end
        if handed_back or may_reclaim then
          redis.call('XCLAIM', key, GROUP, worker, reclaim_ms, entry, 'JUSTID')
          local got = hand_out(p, lane, entry, e[2][2], worker, max_deliveries)
          if got then return got end
        end
      end
    end
    for _ = 1, 16 do
      local r = redis.call('XREADGROUP', 'GROUP', GROUP, worker, 'COUNT', 1, 'STREAMS', key, '>')
      if not r or not r[1] or not r[1][2][1] then break end
      local e = r[1][2][1]
      local got = hand_out(p, lane, e[1], e[2][2], worker, max_deliveries)
      if got then return got end
    end
  end
  return {}
end

-- beat(P; worker, id...) -> the ids this worker no longer owns. Each job it still owns has its
-- entry's idle time reset (XCLAIM JUSTID, no new delivery); a job reclaimed by another is left
-- to it: this check is why a heartbeat is a function and never a bare XCLAIM.
local function beat(keys, args)
  local p, worker = keys[1], args[1]
  local lost = {}
  for i = 2, #args do
    local job = p .. ':job:' .. args[i]
    local f = redis.call('HMGET', job, 'owner', 'state', 'lane', 'entry')
    if f[1] == worker and f[2] == 'running' then
      redis.call('XCLAIM', lane_key(p, f[3]), GROUP, worker, 0, f[4], 'JUSTID')
    else
      lost[#lost + 1] = args[i]
    end
  end
  return lost
end

-- complete(P; worker, id, verdict, result) -> "done" | "attempt": the first completion by the
-- job's owner is the job's result and is acknowledged; any other is kept as an attempt, and
-- one whose verdict is not the result's marks the job nondeterministic.
local function complete(keys, args)
  local p, worker, id, verdict, result = keys[1], args[1], args[2], args[3], args[4]
  local job = p .. ':job:' .. id
  local f = redis.call('HMGET', job, 'owner', 'state', 'lane', 'entry', 'verdict')
  local owner, state, lane, entry, first = f[1], f[2], f[3], f[4], f[5]
  if owner == worker and state == 'running' then
    local now = now_ms()
    redis.call('HSET', job, 'result', result, 'verdict', verdict, 'by', worker, 'done_ms', now, 'owner', '')
    set_state(p, job, state, 'done')
    redis.call('XACK', lane_key(p, lane), GROUP, entry)
    redis.call('ZADD', p .. ':finished', now, id)
    return 'done'
  end
  local same = false
  if first then same = first == verdict end
  redis.call('RPUSH', p .. ':attempts', cjson.encode({job = id, worker = worker, verdict = verdict,
                                                       first = first or false, same = same, state = state or false}))
  if first and first ~= verdict then redis.call('HSET', job, 'nondeterministic', verdict) end
  return 'attempt'
end

-- fail(P; worker, id, why, reclaim_ms) -> "released" | "attempt": the grader's own failure (a box
-- not made, a disk full) on a job this worker owns: released at once to be delivered again,
-- dead-lettered by the next take once it has been delivered max_deliveries times.
local function fail(keys, args)
  local p, worker, id, why, reclaim_ms = keys[1], args[1], args[2], args[3], tonumber(args[4])
  local job = p .. ':job:' .. id
  local f = redis.call('HMGET', job, 'owner', 'state', 'lane', 'entry')
  if f[1] ~= worker or f[2] ~= 'running' then return 'attempt' end
  redis.call('HSET', job, 'last_error', why, 'owner', '')
  set_state(p, job, 'running', 'queued')
  redis.call('XCLAIM', lane_key(p, f[3]), GROUP, worker, 0, f[4], 'IDLE', reclaim_ms + 1, 'JUSTID')
  return 'released'
end

-- status(P; minute_ms) -> {state counts (a flat list), the oldest waiting job's age in ms (-1:
-- none), jobs done in the last minute_ms, {consumer, jobs it holds, ms since its last heartbeat,
-- the folders of up to 20 of them}..., attempts recorded}. A worker's heartbeat resets the idle
-- time of every entry it holds, so the least idle of them is when it was last heard from.
local MAX_NAMED = 20
local function status(keys, args)
  local p = keys[1]
  local now = now_ms()
  local oldest = -1
  local holding = {}
  local by_worker = {}
  for _, lane in ipairs({'interactive', 'bulk'}) do
    local key = lane_key(p, lane)
    local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', key)
    if ok then
      for _, g in ipairs(groups) do
        local info = {}
        for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
        if info['name'] == GROUP then
          local waiting = redis.call('XRANGE', key, '(' .. info['last-delivered-id'], '+', 'COUNT', 1)
          if waiting[1] then
            local age = now - tonumber(string.match(waiting[1][1], '^(%d+)'))
            if age > oldest then oldest = age end
          end
          for _, e in ipairs(redis.call('XPENDING', key, GROUP, '-', '+', 10000)) do
            local worker, idle = e[2], tonumber(e[3])
            local h = by_worker[worker]
            if not h then
              h = {worker, 0, idle, {}}
              by_worker[worker] = h
              holding[#holding + 1] = h
            end
            h[2] = h[2] + 1
            if idle < h[3] then h[3] = idle end
            if #h[4] < MAX_NAMED then
              local entry = redis.call('XRANGE', key, e[1], e[1])
              local job = entry[1] and entry[1][2][2]
              if job then h[4][#h[4] + 1] = redis.call('HGET', p .. ':job:' .. job, 'name') or job end
            end
          end
        end
      end
    end
  end
  local minute = redis.call('ZCOUNT', p .. ':finished', now - tonumber(args[1]), '+inf')
  return {redis.call('HGETALL', p .. ':n'), oldest, minute, holding, redis.call('LLEN', p .. ':attempts')}
end

redis.register_function('cb_queue_v1_push', push)
redis.register_function('cb_queue_v1_refuse', refuse)
redis.register_function('cb_queue_v1_repair', repair)
redis.register_function('cb_queue_v1_take', take)
redis.register_function('cb_queue_v1_beat', beat)
redis.register_function('cb_queue_v1_complete', complete)
redis.register_function('cb_queue_v1_fail', fail)
redis.register_function{function_name = 'cb_queue_v1_status', callback = status, flags = {'no-writes'}}
