#!/usr/bin/env bash
# deploy/grafana/eosaudit.json: valid JSON with the structure Grafana
# provisioning needs (unique panel ids, refIds, grid positions, the
# datasource variable), PromQL that promtool parses, the panels the issue
# asks for, and no metric the binary does not export: every eosaudit_*
# name in the dashboard's queries (and in the alert rules) must be a
# family of a running serve's /metrics, or the _bucket/_sum/_count series
# of one of its histograms.  serve audits a flow (T the sink of source S,
# a processor group that has committed nothing), so that the flow's
# families are there too.
source "$(dirname "$0")/lib.sh"

command -v promtool >/dev/null 2>&1 || die "promtool not found (Debian package prometheus)"
command -v curl >/dev/null 2>&1 || die "curl not found"
PY=python3
"$PY" -c 'import yaml' 2>/dev/null || PY=/usr/bin/python3
"$PY" -c 'import yaml' 2>/dev/null || die "python3 yaml not found (Debian package python3-yaml)"

DASH="$ROOT/deploy/grafana/eosaudit.json"
T="$(name main)"
S="$(name src)"
create_topic "$T" 2
create_topic "$S" 1
produce -t "$T" --producer "$(name p)" -n 50 --seed 1
[ "$PROD_RC" = 0 ] || die "produce failed"
produce -t "$S" --producer "$(name ps)" -n 10 --seed 2
[ "$PROD_RC" = 0 ] || die "produce failed"

bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$IT_TMP/ledger.db" \
        --source "$S" --processor-group "$(name group)" \
        --commit-interval-ms 200 --listen 127.0.0.1:0 >"$IT_TMP/serve.log" 2>&1
URL=
for ((i = 0; i < 300; i++)); do
        URL="$(sed -n 's|.*http: listening on \(http://[^ ]*\)$|\1|p' "$IT_TMP/serve.log")"
        [ -n "$URL" ] && break
        kill -0 "$SERVE" 2>/dev/null || break
        sleep 0.1
done
[ -n "$URL" ] || { cat "$IT_TMP/serve.log"; die "serve printed no URL"; }
# Every family is there once the ledger is readable and a record has
# been audited (the latency histogram has a topic series then).
for ((i = 0; i < 300; i++)); do
        curl -sf "${URL}metrics" >"$IT_TMP/metrics.txt" || : >"$IT_TMP/metrics.txt"
        grep -q '^eosaudit_ledger_readable 1$' "$IT_TMP/metrics.txt" &&
                grep -q "^eosaudit_records_total{topic=\"$T\"} 50\$" "$IT_TMP/metrics.txt" &&
                grep -q '^eosaudit_consumer_lag_records{' "$IT_TMP/metrics.txt" &&
                grep -q '^eosaudit_flow_processor_lag_records 10$' "$IT_TMP/metrics.txt" && break
        sleep 0.1
done
assert_true "serve's /metrics is complete" grep -q "^eosaudit_records_total{topic=\"$T\"} 50\$" "$IT_TMP/metrics.txt"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status" 0 "$WAIT_RC"

res="$("$PY" - "$DASH" "$IT_TMP/metrics.txt" "$ROOT/deploy/prometheus/alerts.yml" "$IT_TMP/dashboard-rules.yml" <<'PYEOF'
import json, re, sys, yaml
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok

# The exposition's families and their types.
families = {}
for line in open(sys.argv[2]):
    m = re.match(r"^# TYPE (\S+) (\S+)$", line)
    if m:
        families[m.group(1)] = m.group(2)
check(len(families) >= 15, "%d families in /metrics" % len(families))

def family(name):
    """The family a series name belongs to, or None."""
    if name in families:
        return name
    for suffix, types in (("_bucket", ("histogram",)),
                          ("_sum", ("histogram", "summary")),
                          ("_count", ("histogram", "summary"))):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            if families.get(base) in types:
                return base
    return None

try:
    d = json.load(open(sys.argv[1]))
    check(True, "the dashboard is JSON")
except ValueError as e:
    check(False, "the dashboard is JSON: %s" % e)
    sys.exit(1)

check(bool(d.get("uid")) and bool(d.get("title")), "uid and title")
check(isinstance(d.get("schemaVersion"), int), "schemaVersion")
vars_ = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
check(vars_.get("datasource", {}).get("type") == "datasource" and
      vars_["datasource"].get("query") == "prometheus",
      "a Prometheus datasource variable")

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))

ids, exprs = set(), []
for p in panels(d["panels"]):
    title = p.get("title", "?")
    check(p.get("id") not in ids, "panel %r: unique id %s" % (title, p.get("id")))
    ids.add(p.get("id"))
    g = p.get("gridPos", {})
    check(all(isinstance(g.get(k), int) for k in "hwxy") and g["x"] + g["w"] <= 24,
          "panel %r: grid position within 24 columns" % title)
    if p.get("type") == "row":
        continue
    check(p.get("datasource", {}).get("uid") == "${datasource}",
          "panel %r: uses the datasource variable" % title)
    refs = [t.get("refId") for t in p.get("targets", [])]
    check(len(refs) > 0 and len(set(refs)) == len(refs) and all(refs),
          "panel %r: targets with distinct refIds" % title)
    for t in p.get("targets", []):
        exprs.append((title, t.get("refId"), t.get("expr", "")))
for v in vars_.values():
    q = v.get("query")
    if isinstance(q, dict):
        q = q.get("query", "")
    if v.get("type") == "query":
        exprs.append(("variable " + v["name"], "-", q))

# Names used in PromQL.
name_re = re.compile(r"\beosaudit_[A-Za-z0-9_]+")
used = set()
for title, ref, e in exprs:
    for n in name_re.findall(e):
        f = family(n)
        check(f is not None, "%s %s: %s is exported" % (title, ref, n))
        if f:
            used.add(f)
rules = yaml.safe_load(open(sys.argv[3]))
for g in rules["groups"]:
    for r in g["rules"]:
        texts = [r["expr"]] + list(r.get("annotations", {}).values())
        for n in set(name_re.findall(" ".join(texts))):
            check(family(n) is not None,
                  "alert %s: %s is exported" % (r.get("alert"), n))

# What the issue asks the dashboard to show.
for f in ("eosaudit_records_total", "eosaudit_anomalous_records_total",
          "eosaudit_anomaly_events_total", "eosaudit_unaudited_offsets_total",
          "eosaudit_missing_records_total", "eosaudit_open_gaps",
          "eosaudit_consumer_lag_records", "eosaudit_record_latency_seconds",
          "eosaudit_ledger_commit_duration_seconds", "eosaudit_ready"):
    check(f in used, "the dashboard shows %s" % f)
check(any(re.search(r"\bup\{", e) for _, _, e in exprs), "the dashboard shows up")
check(any("histogram_quantile" in e and "eosaudit_record_latency_seconds_bucket" in e
          for _, _, e in exprs), "latency quantiles from the histogram")
# The flow (issue 15): outcomes, end-to-end latency from its histogram,
# the processor's lag.
for f in ("eosaudit_flow_records_total", "eosaudit_flow_latency_seconds",
          "eosaudit_flow_processor_lag_records"):
    check(f in used, "the dashboard shows %s" % f)
check(families.get("eosaudit_flow_latency_seconds") == "histogram",
      "eosaudit_flow_latency_seconds is a histogram")
check(any("histogram_quantile" in e and "eosaudit_flow_latency_seconds_bucket" in e
          for _, _, e in exprs), "flow latency quantiles from the histogram")
check(any(re.search(r'outcome=~"lost\|duplicated\|unexpected"', e) for _, _, e in exprs),
      "the flow's bad outcomes")
check(any(re.search(r"sum by \(kind\)", e) and "eosaudit_anomalous_records_total" in e
          for _, _, e in exprs), "anomalous records by kind")
# One unit a query: records and events are never added up in one PromQL
# expression (sum() over a mixed family meant nothing).
for title, ref, e in exprs:
    check(not ("eosaudit_anomalous_records_total" in e and
               "eosaudit_anomaly_events_total" in e),
          "%s %s: records and events not mixed" % (title, ref))

# PromQL syntax: every query as a recording rule, for promtool.
sub = lambda e: (e.replace("$job", "eosaudit").replace("$instance", ".*")
                 .replace("$topic", ".*").replace("$__rate_interval", "1m"))
rec = [{"record": "dashboard:q%d" % i, "expr": sub(e)}
       for i, (_, _, e) in enumerate(exprs) if not e.startswith("label_values(")]
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rec}]},
               open(sys.argv[4], "w"))
sys.exit(1 if bad else 0)
PYEOF
)"
echo "$res"
IT_CHECKS=$((IT_CHECKS + $(grep -c '^ok ' <<<"$res") + $(grep -c '^FAIL ' <<<"$res")))
IT_FAILED=$((IT_FAILED + $(grep -c '^FAIL ' <<<"$res")))
[ -s "$IT_TMP/dashboard-rules.yml" ] || die "the dashboard check did not run to its end"
assert_true "promtool parses every dashboard query" \
        promtool check rules "$IT_TMP/dashboard-rules.yml"

finish
