-- bench/wrk_report.lua - wrk script for bench/serve_load.sh.
-- WRK_DELAY_MS=N makes every connection wait N ms between requests (a
-- paced load); unset or 0, wrk sends as fast as the server answers.
-- At the end (also after SIGINT) prints one machine-readable line:
--   WRK_RESULT requests=.. errors=.. status_errors=.. duration_us=.. p50_us=.. p99_us=.. max_us=..
--              kinds=connect:N/read:N/write:N/timeout:N/status:N (non-2xx/3xx)
local delay_ms = tonumber(os.getenv("WRK_DELAY_MS") or "0") or 0
if delay_ms > 0 then
  function delay()
    return delay_ms
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRK_RESULT requests=%d errors=%d status_errors=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d kinds=connect:%d/read:%d/write:%d/timeout:%d/status:%d\n",
    summary.requests, e.connect + e.read + e.write + e.timeout, e.status,
    summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.timeout, e.status))
end
