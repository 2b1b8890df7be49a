/*
 * history.c - ledger_history_foreach(): the per-minute history of the
 * audit, for the dashboard's chart.  Nothing here writes: the rows are
 * added by triggers of schema/0003_history.sql inside the transaction of
 * every ledger_commit(), and pruned there to LEDGER_HISTORY_MINUTES.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

_Static_assert(LEDGER_HISTORY_MINUTES *(int64_t)LEDGER_HISTORY_MINUTE_MS ==
                   604800000,
               "schema/0003_history.sql prunes at 7 days: add a migration");

int ledger_history_foreach(struct ledger *lg, const char *topic,
                           int64_t since_ms, ledger_history_cb *cb,
                           void *opaque, char *errstr, size_t errstr_size)
{
        struct ledger_history_point pt, row;
        sqlite3_stmt *st = NULL;
        int have = 0, src = SQLITE_DONE, brc, rc = -1, stop = 0;

        /* Rows of one minute (one per topic) are summed here, saturating,
         * as SQL SUM() would fail on overflow. */
        if (ledger_prepare(lg,
                           "SELECT minute_ms, records, untracked, anomalous, "
                           "gaps, missing, unaudited FROM history "
                           "WHERE minute_ms >= ?2 "
                           "AND (?1 IS NULL OR topic = ?1) "
                           "ORDER BY minute_ms",
                           &st, errstr, errstr_size))
                goto out;
        brc = ledger_bind_topic(st, topic);
        brc |= sqlite3_bind_int64(st, 2, since_ms);
        if (brc != SQLITE_OK) {
                ledger_err(lg, "cannot read ledger history", errstr,
                           errstr_size);
                goto out;
        }
        memset(&pt, 0, sizeof(pt));
        while (!stop && (src = sqlite3_step(st)) == SQLITE_ROW) {
                row.minute_ms = sqlite3_column_int64(st, 0);
                row.records = ledger_u64_get(st, 1);
                row.untracked = ledger_u64_get(st, 2);
                row.anomalous = ledger_u64_get(st, 3);
                row.gaps = ledger_u64_get(st, 4);
                row.missing = ledger_u64_get(st, 5);
                row.unaudited = ledger_u64_get(st, 6);
                if (have && row.minute_ms != pt.minute_ms) {
                        stop = cb(opaque, &pt);
                        have = 0;
                }
                if (!have) {
                        pt = row;
                        have = 1;
                        continue;
                }
                pt.records = dedup_sat_add(pt.records, row.records);
                pt.untracked = dedup_sat_add(pt.untracked, row.untracked);
                pt.anomalous = dedup_sat_add(pt.anomalous, row.anomalous);
                pt.gaps = dedup_sat_add(pt.gaps, row.gaps);
                pt.missing = dedup_sat_add(pt.missing, row.missing);
                pt.unaudited = dedup_sat_add(pt.unaudited, row.unaudited);
        }
        if (!stop && src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger history", errstr,
                           errstr_size);
                goto out;
        }
        if (!stop && have)
                cb(opaque, &pt);
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}
