/*
 * dashboard.test.js - opens the eosaudit dashboard in Debian's headless
 * chromium (driven by playwright-core, no browser download) and checks it
 * against the JSON API of the same server:
 *   - every number on the page (elements with data-field) equals the one in
 *     /api/v1/summary, and the verdict is the summary's;
 *   - the anomalies table holds the newest anomalies, each with evidence;
 *   - the lag table has one row per partition of /api/v1/partitions;
 *   - the flow panel: hidden when /api/v1/flows has no flow, else its
 *     numbers are the endpoint's; with a staged flow (lost, duplicated,
 *     unexpected, latency, processor lag) it shows exactly those, the bad
 *     outcomes standing out;
 *   - the chart draws the ledger's history (/api/v1/history): the records
 *     it holds are every record audited, its bars are drawn, and a reload
 *     shows them again at once;
 *   - the layout, at 1400x1000 (a laptop): the verdict leads and the
 *     evidence table starts within the first screen, nothing scrolls
 *     sideways; at 420x900 (a phone): no horizontal scroll of the page or
 *     of the tables, the evidence starts within the first screen;
 *   - staged summaries: a "not audited" verdict is an amber banner, and
 *     without the verdict field the page applies the same rule itself;
 *   - the kind filter asks the API for that kind, and redelivered rows show
 *     where their first copies are and the message id (printable as is,
 *     otherwise hex, "…" when cut): /api/v1/anomalies is answered with
 *     staged items for that check, whatever the audit found.
 * Saves a screenshot at each size (dashboard-1400.png, dashboard-420.png).
 * Prints one line per check, the layout figures, and "N passed, M failed".
 *
 *   node dashboard.test.js URL OUTDIR
 * Environment: CHROMIUM (default /usr/bin/chromium), EOSAUDIT_TOKEN, and
 * DONE_FILE: when set, the page is opened at once and the checks wait
 * until that file exists (the caller creates it once the audit has
 * stopped changing).
 */
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const url = process.argv[2];
const outDir = process.argv[3] || ".";
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
const LAPTOP = { width: 1400, height: 1000 };
const PHONE = { width: 420, height: 900 };
let passed = 0, failed = 0;

function check(what, ok, detail) {
  if (ok) passed++; else failed++;
  console.log((ok ? "ok   " : "FAIL ") + what + (detail ? " (" + detail + ")" : ""));
}

async function api(p) {
  const headers = process.env.EOSAUDIT_TOKEN
    ? { Authorization: "Bearer " + process.env.EOSAUDIT_TOKEN } : {};
  const r = await fetch(new URL(p, url), { headers });
  if (!r.ok) throw new Error(p + ": HTTP " + r.status);
  return r.json();
}

function get(obj, p) {
  return p.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

/* Waits until fn() returns a truthy value, or throws after ms. */
async function until(what, ms, fn) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("timed out waiting for " + what);
}

/* Waits for a poll that started after this call. */
async function nextPoll(page) {
  const n = await page.$eval("body", (b) => Number(b.getAttribute("data-polls")));
  await until("a poll", 10000, () =>
    page.$eval("body", (b, k) => Number(b.getAttribute("data-polls")) > k + 1, n));
}

/* The verdict rule of the issue, for a summary without a verdict field. */
function verdictOf(s) {
  if (s.verdict) return s.verdict.replace(/_/g, " ");
  if (s.anomalies_total > 0) return "anomalies";
  return s.records_total - s.untracked > 0 || s.ids_checked > 0 ? "clean" : "not audited";
}

/* Where things are, in CSS pixels from the top of the page. */
function layout(page) {
  return page.evaluate(() => {
    const top = (sel) => {
      const e = document.querySelector(sel);
      return e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : -1;
    };
    const row = document.querySelector("#anomalies-table tbody tr");
    const wrap = document.querySelector("#anomalies-table").parentElement;
    const lag = document.querySelector("#lag-table").parentElement;
    return {
      verdict: top("#verdict"),
      kinds: top("#kinds"),
      evidence: top("#anomalies-table"),
      firstRowBottom: row ? Math.round(row.getBoundingClientRect().bottom + window.scrollY) : -1,
      chart: top("#chart"),
      height: document.documentElement.scrollHeight,
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      tableOverflow: wrap.scrollWidth - wrap.clientWidth,
      lagOverflow: lag.scrollWidth - lag.clientWidth,
    };
  });
}

/* Pixels of the chart near each of its colours. */
function chartPixels(page) {
  return page.$eval("#chart", (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const near = (i, r, g, b) =>
      Math.abs(d[i] - r) < 24 && Math.abs(d[i + 1] - g) < 24 && Math.abs(d[i + 2] - b) < 24;
    let records = 0, anomalous = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 200) continue;
      if (near(i, 0x9d, 0xbc, 0xf2)) records++;
      if (near(i, 0xd2, 0x42, 0x3b)) anomalous++;
    }
    return { records, anomalous, w: c.width };
  });
}

async function main() {
  if (!url) throw new Error("usage: node dashboard.test.js URL OUTDIR");
  fs.mkdirSync(outDir, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "eosaudit-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: exe,
    headless: true,
    viewport: LAPTOP,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
  });
  /* The page polls every 2 s (POLL_MS, its only timer), and the checks
   * wait some ten times for a poll that starts after them (nextPoll): here
   * that timer runs every 250 ms, the same polls in the same order, so the
   * waits take seconds, not half a minute. */
  await ctx.addInitScript(() => {
    const st = window.setTimeout;
    window.setTimeout = (fn, ms, ...rest) => st(fn, ms === 2000 ? 250 : ms, ...rest);
  });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    const resp = await page.goto(url, { waitUntil: "load" });
    check("GET / answers 200", resp && resp.status() === 200, resp && String(resp.status()));
    check("page title", (await page.title()) === "eosaudit");

    if (process.env.DONE_FILE) {
      await until("the audit to finish (" + process.env.DONE_FILE + ")", 180000,
        () => fs.existsSync(process.env.DONE_FILE));
    }
    await until("the first poll", 20000, () =>
      page.$eval("body", (b) => Number(b.getAttribute("data-polls")) >= 1));

    /* The demo has finished: the figures are stable.  Compare after a poll
     * that follows the API read. */
    const summary = await api("api/v1/summary");
    await nextPoll(page);
    const fields = await page.$$eval("[data-field]", (els) =>
      els.map((e) => [e.getAttribute("data-field"), e.getAttribute("data-value"), e.textContent]));
    check("page shows the summary's numbers", fields.length >= 15, fields.length + " fields");
    for (const [field, value, text] of fields) {
      const want = get(summary, field);
      check("page " + field + " = " + want,
        value === (want == null ? "" : String(want)), "page says " + text);
    }
    check("records audited > 0", summary.records_total > 0, String(summary.records_total));
    const verdict = await page.$eval("#verdict", (e) => ({
      verdict: e.getAttribute("data-verdict"), anomalies: e.getAttribute("data-anomalies"),
      cls: e.className, text: e.textContent }));
    check("verdict is the summary's", verdict.verdict === verdictOf(summary),
      verdict.verdict + ": " + verdict.text);
    check("verdict counts anomalies_total", verdict.anomalies === String(summary.anomalies_total),
      verdict.anomalies);
    check("the demo's verdict says anomalies, unit by unit",
      verdict.cls === "verdict bad" && /anomalous records?/.test(verdict.text) &&
      !/Anomalies found: [0-9]/.test(verdict.text), verdict.text);
    const found = await page.$$eval("#kinds .tile.found", (ts) => ts.map((t) => t.getAttribute("data-kind")));
    const wantFound = ["duplicate", "gap", "out_of_order", "fenced", "redelivered", "malformed"]
      .filter((k) => summary.anomalies[k] > 0).concat(summary.coverage_gaps > 0 ? ["coverage"] : []);
    check("the kinds found stand out, the others do not",
      found.slice().sort().join() === wantFound.slice().sort().join(), found.join(" "));

    const newest = await api("api/v1/anomalies?limit=25");
    const rows = await page.$$eval("#anomalies-table tbody tr[data-anomaly-id]", (trs) =>
      trs.map((tr) => ({
        id: tr.getAttribute("data-anomaly-id"),
        kind: tr.getAttribute("data-kind"),
        evidence: tr.querySelector("[data-evidence]").textContent,
      })));
    check("anomalies table has rows", rows.length > 0, rows.length + " rows");
    check("anomalies table = newest of /api/v1/anomalies",
      rows.length === newest.anomalies.length &&
      rows.every((r, i) => r.id === String(newest.anomalies[i].id) &&
                           r.kind === newest.anomalies[i].kind),
      rows.slice(0, 3).map((r) => r.id + ":" + r.kind).join(" "));
    check("every anomaly row shows evidence",
      rows.every((r) => /offset/.test(r.evidence)), rows[0] && rows[0].evidence);

    const parts = await api("api/v1/partitions");
    const lagRows = await page.$$eval("#lag-table tbody tr[data-partition]", (trs) =>
      trs.map((tr) => [tr.getAttribute("data-partition"), tr.getAttribute("data-lag")]));
    check("lag table has one row per partition",
      lagRows.length === parts.partitions.length && lagRows.length > 0,
      lagRows.length + " rows, " + parts.partitions.length + " partitions");

    /* The flow panel: the endpoint's numbers, or hidden without a flow. */
    const flowCells = () => page.$$eval("#flow-panel [data-flow]", (els) =>
      els.map((e) => [e.getAttribute("data-flow"), e.getAttribute("data-value"),
                      e.classList.contains("nonzero")]));
    const flowShown = () => page.$eval("#flow-panel", (e) => ({
      present: e.getAttribute("data-flow-present"), shown: e.offsetHeight > 0 }));
    /* The demo has finished and a poll followed (above): the panel is
     * what the endpoint says now. */
    const flows = await api("api/v1/flows?limit=1");
    let fshown = await flowShown();
    if (flows.flow) {
      const f = Object.assign({ processor_lag: flows.processor_lag }, flows.flow);
      check("flow panel shown for the flow", fshown.present === "true" && fshown.shown, JSON.stringify(fshown));
      for (const [field, value] of await flowCells()) {
        const w = get(f, field);
        check("flow panel " + field + " = " + w, value === (w == null ? "" : String(w)), value);
      }
    } else {
      check("no flow: the flow panel is hidden", fshown.present === "false" && !fshown.shown,
        JSON.stringify(fshown));
    }

    /* The chart: the ledger's history, not what the page saw. */
    const hist = await api("api/v1/history?minutes=60");
    const histRecords = hist.points.reduce((m, p) => m + p.records, 0);
    const histAnomalous = hist.points.reduce((m, p) => m + p.anomalous_records, 0);
    check("history holds every record audited", histRecords === summary.records_total,
      histRecords + " of " + summary.records_total + " in " + hist.points.length + " minutes");
    await until("the chart of the history", 15000, () =>
      page.$eval("#chart", (c, n) => c.getAttribute("data-history-records") === String(n), histRecords));
    const px = await chartPixels(page);
    check("chart has the records bars", px.records > 100, px.records + " pixels");
    check("chart has the anomalous records bars", histAnomalous === 0 || px.anomalous > 100,
      px.anomalous + " pixels, " + histAnomalous + " anomalous records");
    check("no script errors", errors.length === 0, errors.join("; "));

    /* A reload keeps the chart: it comes from the ledger. */
    await page.reload({ waitUntil: "load" });
    await until("the chart after a reload", 10000, () =>
      page.$eval("#chart", (c) => Number(c.getAttribute("data-drawn")) >= 1));
    const again = await page.$eval("#chart", (c) => c.getAttribute("data-history-records"));
    check("after a reload the chart shows the same history at once",
      again === String(histRecords), again);
    await nextPoll(page);

    /* Laptop layout. */
    const lt = await layout(page);
    console.log("layout 1400x1000: " + JSON.stringify(lt));
    check("laptop: the verdict leads", lt.verdict >= 0 && lt.verdict < 120, "top " + lt.verdict);
    check("laptop: the evidence table starts within the first screen",
      lt.evidence > 0 && lt.evidence < 450, "top " + lt.evidence);
    check("laptop: its first rows are visible without scrolling",
      lt.firstRowBottom > 0 && lt.firstRowBottom < LAPTOP.height, "first row ends at " + lt.firstRowBottom);
    check("laptop: the chart is visible without scrolling", lt.chart > 0 && lt.chart < 600,
      "top " + lt.chart);
    check("laptop: no horizontal scroll", lt.scrollWidth <= lt.clientWidth,
      lt.scrollWidth + " > " + lt.clientWidth);
    const shot = path.join(outDir, "dashboard-1400.png");
    await page.screenshot({ path: shot });
    check("laptop screenshot saved", fs.statSync(shot).size > 10000, shot);

    /* Staged summaries: the verdict's banner. */
    const staged = (o) => Object.assign({}, summary, o);
    let next = null;
    const isSummary = (u) => u.pathname.endsWith("/api/v1/summary");
    await page.route(isSummary, (route) => route.fulfill({
      status: 200, contentType: "application/json", body: JSON.stringify(next) }));
    const banner = async (s) => {
      next = s;
      await nextPoll(page);
      return page.$eval("#verdict", (e) => ({ verdict: e.getAttribute("data-verdict"),
        cls: e.className, text: e.textContent, bg: getComputedStyle(e).backgroundColor }));
    };
    let b = await banner(staged({ verdict: "not audited", anomalies_total: 0,
      untracked: summary.records_total, anomalies: Object.fromEntries(
        Object.keys(summary.anomalies).map((k) => [k, 0])) }));
    check("verdict \"not audited\" is an amber banner",
      b.verdict === "not audited" && b.cls === "verdict unaudited" && /^Not audited/.test(b.text) &&
      b.bg === "rgb(255, 244, 224)", b.cls + " " + b.bg + ": " + b.text);
    const noVerdict = staged({ anomalies_total: 0, untracked: summary.records_total,
      ids_checked: 0 });
    delete noVerdict.verdict;
    b = await banner(noVerdict);
    check("without a verdict field: nothing tracked is not audited",
      b.verdict === "not audited" && b.cls === "verdict unaudited", b.text);
    const mostly = staged({ verdict: "clean", anomalies_total: 0,
      untracked: Math.ceil(summary.records_total * 0.8) });
    b = await banner(mostly);
    const note = await page.$eval("#untracked-note", (e) => ({ shown: e.offsetHeight > 0, text: e.textContent }));
    check("clean but mostly untracked says so", b.cls === "verdict clean" && note.shown &&
      /Mostly untracked/.test(note.text), note.text);
    const clean = staged({ anomalies_total: 0 });
    delete clean.verdict;
    b = await banner(clean);
    check("without a verdict field: tracked and no anomaly is clean",
      b.verdict === "clean" && b.cls === "verdict clean", b.text);
    await page.unroute(isSummary);
    await nextPoll(page);

    /* A staged flow: the panel shows exactly its numbers. */
    const stagedFlow = { limit: 1, next_cursor: null, evidence: [], processor_lag: 42,
      flow: { expect: "exactly-one", source_records: 3000, delivered: 2990, lost: 7,
        duplicated: 2, duplicate_copies: 2, unexpected: 1, pending: 1, awaiting_source: 0,
        sink_records: 2995, latency_ms: { count: 2992, p50: 20, p99: 200, max: 512 } } };
    const isFlows = (u) => u.pathname.endsWith("/api/v1/flows");
    await page.route(isFlows, (route) => route.fulfill({
      status: 200, contentType: "application/json", body: JSON.stringify(stagedFlow) }));
    await nextPoll(page);
    fshown = await flowShown();
    check("staged flow: the panel is shown", fshown.present === "true" && fshown.shown, JSON.stringify(fshown));
    const sf = Object.assign({ processor_lag: 42 }, stagedFlow.flow);
    const cells = await flowCells();
    check("staged flow: every figure of the panel",
      cells.length === 10 && cells.every(([field, value]) => value === String(get(sf, field))),
      JSON.stringify(cells));
    check("staged flow: lost, duplicated, unexpected and the lag stand out, delivered does not",
      cells.filter((c) => c[2]).map((c) => c[0]).sort().join() ===
        "duplicated,lost,processor_lag,unexpected", JSON.stringify(cells));
    const flowText = await page.$eval("#flow-panel", (e) => e.textContent.replace(/\s+/g, " "));
    check("staged flow: latency and lag read with their units",
      /p50 20 ms p99 200 ms max 512 ms/.test(flowText) && /processor lag 42 records/.test(flowText),
      flowText);
    await page.unroute(isFlows);

    /* Redelivered rows, staged: the page's rendering of their evidence. */
    const item = (o) => Object.assign({
      id: 1, kind: "redelivered", topic: "t", partition: 0, producer: null,
      epoch: null, seq_lo: null, seq_hi: null, offset_lo: 0, offset_hi: 0,
      first_offset: null, first_partition: null, first_offset_hi: null,
      msgid: null, msgid_hex: null, msgid_len: null, count: 1,
      detected_ms: Date.now(),
    }, o);
    const stagedRows = { limit: 25, next_cursor: null, anomalies: [
      item({ id: 3, partition: 2, producer: "p2", epoch: 2, seq_lo: 10, seq_hi: 12,
             offset_lo: 40, offset_hi: 42, first_partition: 1, first_offset: 7,
             first_offset_hi: 9, msgid: "order-17", msgid_len: 8, count: 3 }),
      item({ id: 2, offset_lo: 5, offset_hi: 5, first_partition: 0, first_offset: 1,
             first_offset_hi: 1, msgid: "\ufffd\ufffd", msgid_hex: "c0ff", msgid_len: 300 }),
      item({ id: 1, partition: 1, offset_lo: 8, offset_hi: 8, first_partition: 1,
             first_offset: 3, first_offset_hi: 3, msgid: "a\u0001b", msgid_len: 3 }),
    ] };
    let asked = "";
    const isAnomalies = (u) => u.pathname.endsWith("/api/v1/anomalies");
    await page.route(isAnomalies, (route) => {
      asked = route.request().url();
      return route.fulfill({ status: 200, contentType: "application/json",
                             body: JSON.stringify(stagedRows) });
    });
    await page.selectOption("#kind-filter", "redelivered");
    await until("the staged redelivered rows", 10000, () =>
      page.$$eval('#anomalies-table tbody tr[data-kind="redelivered"]', (trs) => trs.length === 3));
    check("the kind filter asks for kind=redelivered",
      new URL(asked).searchParams.get("kind") === "redelivered", asked);
    const ev = await page.$$eval('#anomalies-table tbody tr[data-kind="redelivered"] [data-evidence]',
      (els) => els.map((e) => e.textContent));
    const want = [
      "epoch 2, seq 10–12, offsets 40–42 are copies of partition 1 offsets 7–9, id 'order-17'",
      "offset 5 is a copy of partition 0 offset 1, id 0xc0ff…",
      "offset 8 is a copy of partition 1 offset 3, id 0x610162",
    ];
    want.forEach((w, i) => check("redelivered evidence " + (i + 1), ev[i] === w, ev[i]));
    await page.unroute(isAnomalies);
    await page.selectOption("#kind-filter", "");
    await nextPoll(page);

    /* The range selector asks for another window. */
    await page.selectOption("#range", "10080");
    await until("the 7-day chart", 10000, () =>
      page.$eval("#chart", (c) => c.getAttribute("data-range") === "10080"));
    const week = await page.$eval("#chart", (c) => c.getAttribute("data-history-records"));
    check("the 7-day range charts the same records", week === String(histRecords), week);
    await page.selectOption("#range", "60");
    check("no script errors after the filters", errors.length === 0, errors.join("; "));

    /* Phone layout. */
    await page.setViewportSize(PHONE);
    await nextPoll(page);
    await until("the chart redrawn", 10000, () =>
      page.$eval("#chart", (c) => c.getAttribute("data-range") === "60"));
    const ph = await layout(page);
    console.log("layout 420x900: " + JSON.stringify(ph));
    check("phone: no horizontal page scroll", ph.scrollWidth <= ph.clientWidth,
      ph.scrollWidth + " > " + ph.clientWidth);
    check("phone: the anomalies table does not scroll sideways", ph.tableOverflow <= 0,
      ph.tableOverflow + " px");
    check("phone: the lag table does not scroll sideways", ph.lagOverflow <= 0,
      ph.lagOverflow + " px");
    check("phone: the evidence starts within the first screen",
      ph.evidence > 0 && ph.evidence < PHONE.height, "top " + ph.evidence);
    check("phone: evidence before the chart, the chart within two screens",
      ph.evidence < ph.chart && ph.chart < 2 * PHONE.height, ph.evidence + " vs " + ph.chart);
    const pshot = path.join(outDir, "dashboard-420.png");
    await page.screenshot({ path: pshot });
    check("phone screenshot saved", fs.statSync(pshot).size > 10000, pshot);
    const visible = () => page.$$eval("#anomalies-table tbody tr[data-anomaly-id]",
      (trs) => trs.filter((tr) => tr.offsetHeight > 0).length);
    /* Seen once in CI (1 run in 8 that day): no row visible here though
     * the layout above had measured one, and 25 after the click, which
     * waits for the button.  Not understood (the dashboard drops an
     * anomalies answer whose filter changed meanwhile); so the count is
     * taken once the rows are back, and a wait is logged, not hidden. */
    const t0 = Date.now();
    const before = await until("the anomalies listed", 10000, async () => (await visible()) || 0);
    if (Date.now() - t0 > 300)
      console.log("  note: the anomalies table showed no row for " + (Date.now() - t0) + " ms");
    await page.click("#more");
    const after = await visible();
    check("phone: the newest 6 anomalies, the rest behind a button",
      before === Math.min(6, rows.length) && after === rows.length, before + " then " + after);
    const ph2 = await layout(page);
    check("phone: still no horizontal scroll with every row", ph2.scrollWidth <= ph2.clientWidth,
      String(ph2.scrollWidth));
    check("no script errors at the end", errors.length === 0, errors.join("; "));
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  check("browser test ran to the end", false, e.message);
}).finally(() => {
  console.log(passed + " passed, " + failed + " failed");
  process.exitCode = failed ? 1 : 0;
});
