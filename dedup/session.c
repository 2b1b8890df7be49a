/*
 * session.c - a producer's current session across its partitions (its
 * producer id and epoch, and where the session began): what both the
 * per-partition rules (observe.c) and topic-scoped streams (topic.c)
 * follow to call a write fenced.
 */
#include "dedup.h"
#include "internal.h"

/* How recent pid is among nm's producer ids: 0 (unknown) to 1 + the
 * number of retired ids kept (the current one). */
int dedup_pid_rank(const struct dedup_name *nm, int64_t pid)
{
        int i;

        if (pid == nm->pid)
                return DEDUP_RETIRED_PIDS + 1;
        for (i = DEDUP_RETIRED_PIDS - 1; i >= 0; i--)
                if (pid == nm->retired[i])
                        return i + 1;
        return 0;
}

/*
 * Follows the producer's current session (across its partitions): a
 * producer id not seen before, or a higher epoch of the current one,
 * starts a new session at this record.  Returns 1 when the record
 * belongs to an older session of the producer, else 0.
 */
int dedup_producer_session(struct dedup_tracker *tr, struct dedup_name *nm,
                           const struct dedup_hdrs *h, uint32_t part,
                           int64_t offset)
{
        int i;

        if (h->pid >= 0 && nm->pid >= 0 && h->pid != nm->pid) {
                if (dedup_pid_rank(nm, h->pid))
                        return 1;
                for (i = 0; i + 1 < DEDUP_RETIRED_PIDS; i++)
                        nm->retired[i] = nm->retired[i + 1];
                nm->retired[DEDUP_RETIRED_PIDS - 1] = nm->pid;
                nm->pid = h->pid;
        } else {
                if (h->pid >= 0)
                        nm->pid = h->pid;
                if (nm->epoch >= 0 && h->epoch <= nm->epoch)
                        return h->epoch < nm->epoch;
        }
        nm->epoch = h->epoch;
        nm->session_ms = h->ts_ms > 0 ? tr->rec_ms : -1;
        nm->session_part = part;
        nm->session_offset = offset;
        return 0;
}
