/*
 * demo.h - `eosaudit demo`: librdkafka's in-process mock cluster, the
 * reference producer with injected faults, and the auditor, in one
 * process.  No Kafka install needed.
 */
#ifndef EOSAUDIT_DEMO_H
#define EOSAUDIT_DEMO_H

#include <signal.h>

/* argv[0] is "demo".  *run is cleared by SIGINT/SIGTERM.  version is
 * eosaudit's, for the HTTP server's build info. */
int demo_main(int argc, char **argv, volatile sig_atomic_t *run,
              const char *version);

#endif /* EOSAUDIT_DEMO_H */
