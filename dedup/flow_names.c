/*
 * flow_names.c - the flow audit's names (see flow.h): expectations and
 * outcomes, to and from their text.
 */
#include <string.h>

#include "flow.h"

static const char *const expect_names[] = {"exactly-one", "at-most-one",
                                           "at-least-one"};
static const char *const outcome_names[DEDUP_FLOW__OUTCOMES] = {
    "pending", "delivered", "lost", "duplicated", "awaiting", "unexpected"};

const char *dedup_flow_expect_name(enum dedup_flow_expect e)
{
        return (unsigned)e < 3 ? expect_names[e] : NULL;
}

int dedup_flow_expect_parse(const char *s, enum dedup_flow_expect *out)
{
        unsigned i;

        for (i = 0; i < 3; i++)
                if (!strcmp(s, expect_names[i])) {
                        *out = (enum dedup_flow_expect)i;
                        return 0;
                }
        return -1;
}

const char *dedup_flow_outcome_name(enum dedup_flow_outcome o)
{
        return (unsigned)o < DEDUP_FLOW__OUTCOMES ? outcome_names[o] : NULL;
}

int dedup_flow_outcome_parse(const char *s, enum dedup_flow_outcome *out)
{
        unsigned i;

        for (i = 0; i < DEDUP_FLOW__OUTCOMES; i++)
                if (!strcmp(s, outcome_names[i])) {
                        *out = (enum dedup_flow_outcome)i;
                        return 0;
                }
        return -1;
}
