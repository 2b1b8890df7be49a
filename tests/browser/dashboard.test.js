/*
 * dashboard.test.js - opens the eosaudit dashboard in Debian's headless
 * chromium (driven by playwright-core, no browser download) and checks it
 * against the JSON API of the same server:
 *   - every number on the page (elements with data-field) equals the one in
 *     /api/v1/summary;
 *   - the anomalies table holds the newest anomalies, each with evidence;
 *   - the lag table has one row per partition of /api/v1/partitions;
 *   - the chart canvas was drawn (its data attributes, and coloured pixels);
 *   - the kind filter asks the API for that kind, and redelivered rows show
 *     where their first copies are and the message id (printable as is,
 *     otherwise hex, "…" when cut): /api/v1/anomalies is answered with
 *     staged items for that check, whatever the audit found.
 * Saves a screenshot.  Prints one line per check and "N passed, M failed".
 *
 *   node dashboard.test.js URL OUTDIR
 * Environment: CHROMIUM (default /usr/bin/chromium), EOSAUDIT_TOKEN, and
 * DONE_FILE: when set, the page is opened at once (so that its chart sees
 * the records come in) and the checks wait until that file exists (the
 * caller creates it once the audit has stopped changing).
 */
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const url = process.argv[2];
const outDir = process.argv[3] || ".";
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
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

async function main() {
  if (!url) throw new Error("usage: node dashboard.test.js URL OUTDIR");
  fs.mkdirSync(outDir, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "eosaudit-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: exe,
    headless: true,
    viewport: { width: 1360, height: 1000 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
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
    /* Two polls, so that the chart has a line. */
    await until("two polls", 20000, () =>
      page.$eval("#chart", (c) => Number(c.getAttribute("data-points")) >= 2));

    /* The demo has finished: the figures are stable.  Compare after a poll
     * that follows the API read. */
    const summary = await api("api/v1/summary");
    const polls = await page.$eval("#chart", (c) => Number(c.getAttribute("data-drawn")));
    await until("a poll after the API read", 10000, () =>
      page.$eval("#chart", (c, n) => Number(c.getAttribute("data-drawn")) > n, polls));
    const fields = await page.$$eval("[data-field]", (els) =>
      els.map((e) => [e.getAttribute("data-field"), e.getAttribute("data-value"), e.textContent]));
    check("page shows the summary's numbers", fields.length >= 10, fields.length + " fields");
    for (const [field, value, text] of fields) {
      const want = get(summary, field);
      check("page " + field + " = " + want,
        value === (want == null ? "" : String(want)), "page says " + text);
    }
    check("records audited > 0", summary.records_total > 0, String(summary.records_total));
    const verdict = await page.$eval("#verdict", (e) => e.getAttribute("data-anomalies"));
    check("verdict counts anomalies_total", verdict === String(summary.anomalies_total), verdict);

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

    const chart = await page.$eval("#chart", (c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let blue = 0, red = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] < 200) continue;
        if (d[i + 2] > 180 && d[i] < 90) blue++;
        if (d[i] > 180 && d[i + 1] < 100 && d[i + 2] < 100) red++;
      }
      return { drawn: Number(c.getAttribute("data-drawn")), blue, red, w: c.width };
    });
    check("chart canvas drawn", chart.drawn >= 2 && chart.w > 0, "drawn " + chart.drawn + " times");
    check("chart has the records line", chart.blue > 100, chart.blue + " blue pixels");
    check("chart has the anomalies line", summary.anomalies_total === 0 || chart.red > 100,
      chart.red + " red pixels");
    check("no script errors", errors.length === 0, errors.join("; "));

    const shot = path.join(outDir, "dashboard.png");
    await page.screenshot({ path: shot, fullPage: true });
    check("screenshot saved", fs.statSync(shot).size > 10000, shot);

    /* Redelivered rows, staged: the page's rendering of their evidence. */
    const item = (o) => Object.assign({
      id: 1, kind: "redelivered", topic: "t", partition: 0, producer: null,
      epoch: null, seq_lo: null, seq_hi: null, offset_lo: 0, offset_hi: 0,
      first_offset: null, first_partition: null, first_offset_hi: null,
      msgid: null, msgid_hex: null, msgid_len: null, count: 1,
      detected_ms: Date.now(),
    }, o);
    const staged = { limit: 25, next_cursor: null, anomalies: [
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
                             body: JSON.stringify(staged) });
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
    check("no script errors after the filter", errors.length === 0, errors.join("; "));
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
