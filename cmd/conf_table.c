/*
 * conf_table.c - the option table: the one place where an option of any
 * command (scan, serve, produce, demo) is declared, with its flags,
 * configuration file key, type, default, range and help (see conf.h).
 * Parsing (conf.c), --help and the documentation (conf_doc.c) all read it.
 */
#include "conf.h"

#include <math.h>
#include <stdint.h>

#include "../auditor/audit/audit.h"
#include "../http/http.h"
#include "../producer/producer.h"

#define CONF_SV (CONF_SCAN | CONF_SERVE)
#define CONF_ALL (CONF_SCAN | CONF_SERVE | CONF_FILE)
#define CONF_CMDS                                                             \
        (CONF_SCAN | CONF_SERVE | CONF_PRODUCE | CONF_DEMO | CONF_PROCESS)
#define CONF_STR_(x) #x
#define CONF_STR(x) CONF_STR_(x)

const struct conf_option conf_options[CONF__CNT] = {
    [CONF_CONFIG] = {CONF_CONFIG, NULL, "config", 0, CONF_T_STRING, "FILE",
                     NULL, NULL, 1, CONF_PATH_MAX, NULL, NULL, CONF_SV,
                     "read settings from FILE, `key = value` lines (see "
                     "`eosaudit config-help`); flags given here override "
                     "them"},
    [CONF_BROKERS] = {CONF_BROKERS, "brokers", "brokers", 'b', CONF_T_STRING,
                      "LIST", NULL,
                      "none; required unless bootstrap.servers comes from "
                      "`kafka.*`, -X or -F",
                      1, 65535, NULL, "kafka1:9092,kafka2:9092",
                      CONF_ALL | CONF_PRODUCE | CONF_PROCESS,
                      "bootstrap brokers, host:port[,host:port...]"},
    [CONF_TOPICS] = {CONF_TOPICS, "topics", "topic", 't', CONF_T_LIST,
                     "TOPIC[,...]", NULL, "none; required", 1, 64, NULL,
                     "orders,payments", CONF_ALL,
                     "the topic(s) to audit, comma-separated"},
    [CONF_DB] = {CONF_DB, "db", "db", 0, CONF_T_STRING, "FILE", NULL,
                 "serve: eosaudit.db in the working directory; scan: a "
                 "temporary ledger, removed at exit",
                 1, CONF_PATH_MAX, NULL, "/var/lib/eosaudit/eosaudit.db",
                 CONF_ALL,
                 "the ledger (SQLite): audit state, counters and evidence; "
                 "a later run with the same file audits only what is new; "
                 "one process at a time"},
    [CONF_ISOLATION] =
        {CONF_ISOLATION, "isolation", "isolation", 0, CONF_T_ENUM, "LEVEL",
         "read_committed", NULL, 0, 1, "read_committed|read_uncommitted", NULL,
         CONF_ALL,
         "the consumer's isolation.level; read_uncommitted also "
         "audits the records of aborted and open transactions, "
         "as if they were delivered"},
    [CONF_GAP_GRACE_RECORDS] = {CONF_GAP_GRACE_RECORDS, "gap-grace-records",
                                "gap-grace-records", 0, CONF_T_INT, "N",
                                "1000000", NULL, 0, INT64_MAX, NULL, NULL,
                                CONF_SERVE | CONF_FILE,
                                "serve: confirm an open gap in eos.seq after "
                                "N later records on its partition; 0 = never "
                                "by records"},
    [CONF_GAP_GRACE_MS] = {CONF_GAP_GRACE_MS, "gap-grace-ms", "gap-grace-ms",
                           0, CONF_T_INT, "N", "300000", NULL, 0, INT64_MAX,
                           NULL, NULL, CONF_SERVE | CONF_FILE,
                           "serve: ... or after N ms, whichever comes first; "
                           "0 = never by time; keep it above the producers' "
                           "delivery.timeout.ms, so that a retried record "
                           "can still fill the gap (it is then out_of_order)"},
    [CONF_IDLE_TTL_MS] = {CONF_IDLE_TTL_MS, "idle-ttl-ms", "idle-ttl-ms", 0,
                          CONF_T_INT, "N", "604800000", NULL, 0, INT64_MAX,
                          NULL, NULL, CONF_SERVE | CONF_FILE,
                          "forget a producer idle on a partition for N ms, "
                          "after confirming its open gaps (7 days; logged); "
                          "0 = never"},
    [CONF_MAX_OPEN_GAPS] = {CONF_MAX_OPEN_GAPS, "max-open-gaps",
                            "max-open-gaps", 0, CONF_T_INT, "N", "1024", NULL,
                            1, 1000000, NULL, NULL, CONF_SERVE | CONF_FILE,
                            "open gaps kept per producer and partition; past "
                            "it the oldest is confirmed"},
    [CONF_DEDUP_KEY] = {CONF_DEDUP_KEY, "dedup-key", "dedup-key", 0,
                        CONF_T_STRING, "ID", "msgid", NULL, 1, 262, NULL,
                        "header:ce_id", CONF_ALL,
                        "what identifies a message for redelivery checks "
                        "across producer sessions: msgid (the eos.msgid "
                        "header), header:NAME (any header, e.g. "
                        "header:message-id or header:ce_id), key (the record "
                        "key) or value-hash (a 128-bit hash of key and "
                        "value); a repeated id is redelivered unless the "
                        "sequence check already called the record a "
                        "duplicate or a fenced write; records without it "
                        "are not checked"},
    [CONF_ID_WINDOW] = {CONF_ID_WINDOW, "id-window", "id-window", 0,
                        CONF_T_INT, "N", "1000000", NULL, 0, 1000000000, NULL,
                        NULL, CONF_ALL,
                        "ids remembered per topic for redelivery checks "
                        "(about 16 bytes of memory and 22 of disk each); "
                        "the oldest 1/16 is dropped at a time; 0 = no "
                        "redelivery checks"},
    [CONF_ID_WINDOW_AGE_MS] = {CONF_ID_WINDOW_AGE_MS, "id-window-age-ms",
                               "id-window-age-ms", 0, CONF_T_INT, "N",
                               "86400000", NULL, 0, INT64_MAX, NULL, NULL,
                               CONF_ALL,
                               "... and forget ids first seen more than N ms "
                               "ago (1 day; by the auditor's clock, in 1/16 "
                               "steps); 0 = by count only"},
    /* the flow audit (dedup/flow.h) */
    [CONF_SOURCE] = {CONF_SOURCE, "source", "source", 0, CONF_T_LIST,
                     "TOPIC[,...]", NULL, "none: no flow", 1, 64, NULL,
                     "orders", CONF_ALL,
                     "audit a processor's flow: the topics given with -t are "
                     "the sinks of a processor that reads these sources; "
                     "each source record must reach the sinks as "
                     "--flow-expect says, matched by --dedup-key (the same "
                     "id on both sides): delivered, lost, duplicated or "
                     "pending, and a sink record whose id no source record "
                     "has is unexpected; sink records are judged by lineage "
                     "only, their forwarded eos.* headers raise no sequence "
                     "anomaly"},
    [CONF_PROCESSOR_GROUP] = {CONF_PROCESSOR_GROUP, "processor-group",
                              "processor-group", 0, CONF_T_STRING, "GROUP",
                              NULL,
                              "none: due by --flow-due-records/--flow-due-ms",
                              1, 255, NULL, "orders-enricher", CONF_ALL,
                              "the processor's consumer group (Kafka "
                              "Streams: its application.id); a source record "
                              "is due once the group's committed offset is "
                              "past it and the sinks have been read up to "
                              "where they stood then: exact under "
                              "exactly-once processing"},
    [CONF_PROCESSOR_OFFSETS_TOPIC] =
        {CONF_PROCESSOR_OFFSETS_TOPIC, "processor-offsets-topic",
         "processor-offsets-topic", 0, CONF_T_STRING, "TOPIC", NULL, "none", 1,
         249, NULL, "mm2-offsets.primary.internal", CONF_ALL,
         "for a processor without a consumer group that records its "
         "progress as a Kafka Connect source connector does (MirrorMaker 2 "
         "in dedicated mode: mm2-offsets.SOURCE.internal, on the sinks' "
         "cluster): the offsets it copied up to, read from this topic, are "
         "the frontier, as --processor-group's committed offsets are (not "
         "with it)"},
    [CONF_FLOW_EXPECT] = {CONF_FLOW_EXPECT, "flow-expect", "flow-expect", 0,
                          CONF_T_ENUM, "HOW", "exactly-one", NULL, 0, 2,
                          "exactly-one|at-most-one|at-least-one", NULL,
                          CONF_ALL,
                          "sink copies each source record must have: "
                          "at-most-one for a filtering processor, "
                          "at-least-one for fan-out"},
    [CONF_FLOW_DUE_RECORDS] = {CONF_FLOW_DUE_RECORDS, "flow-due-records",
                               "flow-due-records", 0, CONF_T_INT, "N",
                               "100000", NULL, 0, INT64_MAX, NULL, NULL,
                               CONF_ALL,
                               "without --processor-group a source record is "
                               "due once N sink records came after it (a "
                               "heuristic: a slow processor reads as loss); "
                               "with or without it, a sink record whose "
                               "source was not seen is unexpected once N "
                               "source records came after it (a scan judges "
                               "them all at its end); 0 = never by records"},
    [CONF_FLOW_DUE_MS] = {CONF_FLOW_DUE_MS, "flow-due-ms", "flow-due-ms", 0,
                          CONF_T_INT, "N", "60000", NULL, 0, INT64_MAX, NULL,
                          NULL, CONF_ALL,
                          "... or once the other side's records are N ms "
                          "later (record timestamps); 0 = never by time"},
    [CONF_FLOW_MAX_IDS] = {CONF_FLOW_MAX_IDS, "flow-max-ids", "flow-max-ids",
                           0, CONF_T_INT, "N", "1000000", NULL, 1, 1000000000,
                           NULL, NULL, CONF_ALL,
                           "outstanding ids the flow audit holds in memory "
                           "(about 160 bytes each); past it the oldest is "
                           "moved to the ledger and revived when its copy "
                           "or source comes (one indexed ledger read per "
                           "id not held): a bound costs time, not "
                           "verdicts"},
    [CONF_SOURCE_BOOTSTRAP] = {CONF_SOURCE_BOOTSTRAP, "source-bootstrap",
                               "source-bootstrap", 0, CONF_T_STRING, "LIST",
                               NULL,
                               "none: the sources are on the sinks' "
                               "cluster (-b)",
                               1, 65535, NULL, "primary1:9092,primary2:9092",
                               CONF_ALL,
                               "the sources are on another cluster: its "
                               "bootstrap brokers, host:port[,...]; a "
                               "consumer of its own reads them (the "
                               "source's settings: --source-properties-file "
                               "and --source-X), --processor-group is read "
                               "there, and a copy between clusters "
                               "(MirrorMaker 2, a replicator) is audited as "
                               "a processor: its flow latency is the "
                               "replication latency (docs/FLOW.md)"},
    [CONF_SOURCE_PROPERTIES_FILE] =
        {CONF_SOURCE_PROPERTIES_FILE, "source-kafka-properties-file",
         "source-properties-file", 0, CONF_T_STRING, "FILE", NULL, "none", 1,
         CONF_PATH_MAX, NULL, "/etc/eosaudit/primary.properties", CONF_ALL,
         "--source-bootstrap: the source "
         "cluster's librdkafka properties file, "
         "as -F is the sinks'; its secrets go "
         "here or in source-kafka.* lines"},
    [CONF_SOURCE_KAFKA] = {CONF_SOURCE_KAFKA, "source-kafka.PROPERTY",
                           "source-X", 0, CONF_T_KAFKA, "KEY=VALUE", NULL,
                           "as the sinks' consumer: group.id=eosaudit, "
                           "client.id=eosaudit, isolation.level as set",
                           0, 0, NULL,
                           "security.protocol = SASL_SSL\n"
                           "sasl.mechanisms = SCRAM-SHA-512\n"
                           "sasl.username = eosaudit\n"
                           "sasl.password = secret",
                           CONF_ALL,
                           "--source-bootstrap: a librdkafka property of "
                           "the source cluster's consumer, repeatable "
                           "(none of -X applies to it); a secret is "
                           "refused here, as with -X"},
    [CONF_COMMIT_INTERVAL_MS] = {CONF_COMMIT_INTERVAL_MS, "commit-interval-ms",
                                 "commit-interval-ms", 0, CONF_T_INT, "N",
                                 "1000", NULL, 1, 3600000, NULL, NULL,
                                 CONF_ALL,
                                 "commit the ledger at least every N ms"},
    [CONF_COMMIT_RECORDS] = {CONF_COMMIT_RECORDS, "commit-records",
                             "commit-records", 0, CONF_T_INT, "N", "100000",
                             NULL, 1, 100000000, NULL, NULL, CONF_ALL,
                             "... or every N records, whichever comes first"},
    [CONF_THREADS] = {CONF_THREADS, "threads", "threads", 0, CONF_T_INT, "N",
                      "0", NULL, 0, AUDIT_THREADS_MAX, NULL, "2", CONF_ALL,
                      "threads of the audit, the consumer's included: the "
                      "others parse each batch's headers and ids and free "
                      "its messages, while the consumer's thread gives "
                      "every verdict in each partition's order (the "
                      "ledger commits run on a thread of their own), so "
                      "the counts are the same for any N; "
                      "0 = one per core less one, for librdkafka's broker "
                      "thread (1 on 2 cores)"},
    [CONF_STALL_TIMEOUT_MS] = {CONF_STALL_TIMEOUT_MS, "stall-timeout-ms",
                               "stall-timeout-ms", 0, CONF_T_INT, "N", "30000",
                               NULL, 1, 86400000, NULL, NULL,
                               CONF_SCAN | CONF_FILE,
                               "scan: give up on a partition held below its "
                               "end by an open transaction after N ms"},
    [CONF_METADATA_REFRESH_MS] = {CONF_METADATA_REFRESH_MS,
                                  "metadata-refresh-ms", "metadata-refresh-ms",
                                  0, CONF_T_INT, "N", "60000", NULL, 0,
                                  86400000, NULL, NULL, CONF_SERVE | CONF_FILE,
                                  "serve: look for partitions added to the "
                                  "topics every N ms and audit each new one "
                                  "from its log start (logged), and stop "
                                  "(exit 2) when a topic was deleted and "
                                  "created again (another topic id); "
                                  "0 = never; "
                                  "with --group, the group consumer's "
                                  "topic.metadata.refresh.interval.ms "
                                  "(at most 3600000; 0: librdkafka's 5 "
                                  "minutes); scan reads the partitions once, "
                                  "at its start"},
    [CONF_LISTEN] = {CONF_LISTEN, "listen", "listen", 0, CONF_T_ADDR,
                     "ADDR:PORT", NULL,
                     "serve: " HTTP_LISTEN_DEFAULT ", and when that is taken "
                     "serve goes on without HTTP and says so; scan: off",
                     0, 0, NULL, HTTP_LISTEN_DEFAULT, CONF_ALL,
                     "serve /metrics, /healthz, /readyz, `/api/v1/...` and "
                     "the dashboard on this address (numeric, or "
                     "localhost for 127.0.0.1; "
                     "e.g. 127.0.0.1:8080 or [::1]:8080; :PORT for every "
                     "IPv4 interface; port 0 picks a "
                     "free one); an address given here must be free; 'off' "
                     "serves no HTTP; scan serves only while it scans"},
    [CONF_HTTP_TOKEN_FILE] = {CONF_HTTP_TOKEN_FILE, "http-token-file",
                              "http-token-file", 0, CONF_T_STRING, "FILE",
                              NULL, "none: no authentication", 1,
                              CONF_PATH_MAX, NULL, "/etc/eosaudit/http-token",
                              CONF_ALL,
                              "require `Authorization: Bearer <token>`, the "
                              "token being the first line of FILE, on "
                              "everything but /healthz and the dashboard "
                              "page itself"},
    [CONF_TLS_CERT] = {CONF_TLS_CERT, "tls-cert", "tls-cert", 0, CONF_T_STRING,
                       "FILE", NULL, "none: plain HTTP", 1, CONF_PATH_MAX,
                       NULL, "/etc/eosaudit/tls/cert.pem", CONF_ALL,
                       "serve HTTPS with this PEM certificate (chain); needs "
                       "tls-key"},
    [CONF_TLS_KEY] = {CONF_TLS_KEY, "tls-key", "tls-key", 0, CONF_T_STRING,
                      "FILE", NULL, "none: plain HTTP", 1, CONF_PATH_MAX, NULL,
                      "/etc/eosaudit/tls/key.pem", CONF_ALL,
                      "the PEM private key of tls-cert"},
    [CONF_LOG_LEVEL] = {CONF_LOG_LEVEL, "log-level", "log-level", 0,
                        CONF_T_ENUM, "LEVEL", "info", NULL, 0, 3,
                        "error|warn|info|debug", NULL, CONF_ALL,
                        "what is logged on stderr; error also quiets "
                        "librdkafka's log and scan's progress line; "
                        "librdkafka's lines pass the same filter (its "
                        "warnings as warn, its notices as info, its debug "
                        "lines only with -X debug=...)"},
    [CONF_KAFKA_PROPERTIES_FILE] = {CONF_KAFKA_PROPERTIES_FILE,
                                    "kafka-properties-file", NULL, 'F',
                                    CONF_T_STRING, "FILE", NULL, "none", 1,
                                    CONF_PATH_MAX, NULL,
                                    "/etc/eosaudit/kafka.properties", CONF_ALL,
                                    "librdkafka properties file, kcat-style "
                                    "key=value lines with # comments; keeps "
                                    "secrets out of the main file"},
    [CONF_KAFKA] = {CONF_KAFKA, "kafka.PROPERTY", NULL, 'X', CONF_T_KAFKA,
                    "KEY=VALUE", NULL,
                    "librdkafka's, but group.id=eosaudit, client.id=eosaudit "
                    "and isolation.level=read_committed",
                    0, 0, NULL,
                    "security.protocol = SASL_SSL\n"
                    "sasl.mechanisms = SCRAM-SHA-512\n"
                    "sasl.username = eosaudit\n"
                    "sasl.password = secret\n"
                    "ssl.ca.location = /etc/eosaudit/kafka-ca.pem",
                    CONF_ALL,
                    "any librdkafka property (security.protocol, `sasl.*`, "
                    "`ssl.*`, ...), repeatable; enable.auto.commit, "
                    "enable.auto.offset.store, enable.partition.eof and "
                    "auto.offset.reset stay as the audit needs them"},
    [CONF_TXN_MANIFESTS] = {CONF_TXN_MANIFESTS, "txn-manifests",
                            "txn-manifests", 0, CONF_T_STRING, "TOPIC", NULL,
                            "none: transactions are not checked", 1, 249, NULL,
                            "eos-txn-manifests", CONF_ALL,
                            "check that transactions are atomic: read the "
                            "manifests transactional producers write to "
                            "TOPIC (audited too), and report a transaction "
                            "whose records are not all visible within "
                            "gap-grace-ms (or by the end of a scan) as torn, "
                            "and a visible record of an aborted one as "
                            "aborted_read"},
    [CONF_GROUP] = {CONF_GROUP, "group", "group", 0, CONF_T_STRING, "GROUP",
                    NULL, "none: one process audits every partition", 1, 200,
                    NULL, "eosaudit-orders", CONF_SERVE | CONF_FILE,
                    "serve: share the topics' partitions with the other "
                    "eosaudit processes of consumer group GROUP "
                    "(cooperative-sticky); each partition's state travels "
                    "through the compacted topic eosaudit-GROUP-state, "
                    "written in the same Kafka transaction as the group's "
                    "offsets and the anomalies (eosaudit-GROUP-events), "
                    "redeliveries across members through "
                    "eosaudit-GROUP-ids; the group consumers heartbeat "
                    "every second (heartbeat.interval.ms 1000 unless -X "
                    "sets it), so that a rebalance is served within about "
                    "a second (docs/GROUP.md)"},
    [CONF_GROUP_MEMBER] = {CONF_GROUP_MEMBER, "group-member", "group-member",
                           0, CONF_T_STRING, "NAME", NULL,
                           "the host name and the process id", 1, 200, NULL,
                           "auditor-1", CONF_SERVE | CONF_FILE,
                           "serve --group: this process's name in the "
                           "group, part of its transactional.id "
                           "(eosaudit-GROUP-NAME); a restarted process that "
                           "keeps its name fences its previous instance"},
    [CONF_GROUP_INSTANCE_ID] = {CONF_GROUP_INSTANCE_ID, "group-instance-id",
                                "group-instance-id", 0, CONF_T_STRING, "ID",
                                NULL, "none: dynamic membership", 1, 200, NULL,
                                "auditor-1", CONF_SERVE | CONF_FILE,
                                "serve --group: static membership, the "
                                "consumer's group.instance.id: a member "
                                "restarted with the same ID within "
                                "session.timeout.ms gets its partitions back "
                                "without a rebalance; of two members running "
                                "with the same ID the broker fences the older "
                                "one, which stops (exit 2)"},
    [CONF_GROUP_REPLICATION] = {CONF_GROUP_REPLICATION, "group-replication",
                                "group-replication", 0, CONF_T_INT, "N", "0",
                                NULL, 0, 32767, NULL, NULL,
                                CONF_SERVE | CONF_FILE,
                                "serve --group: the replication factor of "
                                "the state, events and ids topics when they "
                                "are created; 0 = the broker's default"},
    [CONF_GROUP_IDS_PARTITIONS] = {CONF_GROUP_IDS_PARTITIONS,
                                   "group-ids-partitions",
                                   "group-ids-partitions", 0, CONF_T_INT, "N",
                                   "12", NULL, 1, 10000, NULL, NULL,
                                   CONF_SERVE | CONF_FILE,
                                   "serve --group: partitions of the ids "
                                   "topic eosaudit-GROUP-ids when it is "
                                   "created (an existing one keeps its "
                                   "count): the members owning them judge "
                                   "redeliveries across the group's "
                                   "partitions, ids hashed over them"},
    /* produce: the reference producer (producer/producer.h) */
    [CONF_PRODUCE_TOPIC] = {CONF_PRODUCE_TOPIC, NULL, "topic", 't',
                            CONF_T_STRING, "TOPIC", NULL, "none; required", 1,
                            249, NULL, NULL, CONF_PRODUCE,
                            "topic to write (must exist or be "
                            "auto-created)"},
    [CONF_PRODUCER] = {CONF_PRODUCER, NULL, "producer", 0, CONF_T_STRING,
                       "NAME", NULL, "the transactional id, if any", 1,
                       PRODUCER_NAME_MAX, NULL, NULL, CONF_PRODUCE,
                       "eos.producer value, 1..255 bytes"},
    [CONF_PRODUCE_COUNT] = {CONF_PRODUCE_COUNT, NULL, "count", 'n', CONF_T_INT,
                            "COUNT", "1000", NULL, 0, INT64_MAX, NULL, NULL,
                            CONF_PRODUCE, "records to deliver"},
    [CONF_PRODUCE_RATE] = {CONF_PRODUCE_RATE, NULL, "rate", 0, CONF_T_DOUBLE,
                           "N", "0", NULL, 0, 0, NULL, NULL, CONF_PRODUCE,
                           "records/s, 0 = unlimited", 0, HUGE_VAL},
    [CONF_SIZE] = {CONF_SIZE, NULL, "size", 0, CONF_T_INT, "BYTES", "100",
                   NULL, 0, PRODUCER_VALUE_MAX, NULL, NULL, CONF_PRODUCE,
                   "value size, at most 100000000"},
    [CONF_TRANSACTIONAL_ID] = {CONF_TRANSACTIONAL_ID, NULL, "transactional-id",
                               0, CONF_T_STRING, "ID", NULL, NULL, 1, 65535,
                               NULL, NULL, CONF_PRODUCE,
                               "produce in transactions; the epoch and "
                               "eos.pid come from the broker"},
    [CONF_TXN_SIZE] = {CONF_TXN_SIZE, NULL, "txn-size", 0, CONF_T_INT, "N",
                       "100", NULL, 1, INT64_MAX, NULL, NULL, CONF_PRODUCE,
                       "records per transaction (with --transactional-id)"},
    [CONF_ABORT_EVERY] = {CONF_ABORT_EVERY, NULL, "abort-every", 0, CONF_T_INT,
                          "N", "0", NULL, 0, INT64_MAX, NULL, NULL,
                          CONF_PRODUCE,
                          "abort every Nth transaction, 0 = never (else >= "
                          "2); the next transaction reuses the aborted "
                          "records and seqs"},
    [CONF_STATE] = {CONF_STATE, NULL, "state", 0, CONF_T_STRING, "FILE", NULL,
                    NULL, 1, CONF_PATH_MAX, NULL, NULL, CONF_PRODUCE,
                    "session counter: FILE holds one line, the last epoch "
                    "used (decimal); each run (and restart) takes the next "
                    "one and writes it back (temp file + rename) before "
                    "producing; no FILE: epoch 0, +1 per restart"},
    [CONF_EPOCH] = {CONF_EPOCH, NULL, "epoch", 0, CONF_T_INT, "N", NULL, NULL,
                    0, INT32_MAX, NULL, NULL, CONF_PRODUCE,
                    "use epoch N (0..2147483647; +1 per restart); not with "
                    "--state"},
    [CONF_INJECT_DUPLICATES] = {CONF_INJECT_DUPLICATES, NULL,
                                "inject-duplicates", 0, CONF_T_DOUBLE, "P",
                                "0", NULL, 0, 0, NULL, NULL, CONF_PRODUCE,
                                "with probability P (0..1) write a record "
                                "twice",
                                0, 1},
    [CONF_INJECT_GAPS] = {CONF_INJECT_GAPS, NULL, "inject-gaps", 0,
                          CONF_T_DOUBLE, "P", "0", NULL, 0, 0, NULL, NULL,
                          CONF_PRODUCE,
                          "with probability P (0..1) skip the seq before a "
                          "record",
                          0, 1},
    [CONF_ZOMBIE] = {CONF_ZOMBIE, NULL, "zombie", 0, CONF_T_FLAG, NULL, NULL,
                     NULL, 0, 0, NULL, NULL, CONF_PRODUCE,
                     "a stale session writes after a newer one: session A "
                     "writes the first half, B (epoch A+1) the rest, then A "
                     "writes count/10 more (at least 1) to partitions B "
                     "wrote; transactional: B fences A at the broker and A's "
                     "last transaction must fail"},
    [CONF_MSGID_FROM] = {CONF_MSGID_FROM, NULL, "msgid-from", 0, CONF_T_ENUM,
                         "WHAT", "key", NULL, 0, 2, "key|index|none", NULL,
                         CONF_PRODUCE,
                         "each record's message id, the same in every copy "
                         "of it: key (NAME-n), index (n, in decimal) or none "
                         "(no id header); two runs with the same --producer "
                         "into one topic write the same ids: give each run "
                         "its own name, or none, unless the repeats are "
                         "wanted"},
    [CONF_MSGID_HEADER] = {CONF_MSGID_HEADER, NULL, "msgid-header", 0,
                           CONF_T_STRING, "NAME", PRODUCER_MSGID_HEADER, NULL,
                           1, PRODUCER_HEADER_NAME_MAX, NULL, NULL,
                           CONF_PRODUCE,
                           "header the id goes under, 1..255 bytes, not one "
                           "of the other eos.* headers"},
    [CONF_RESTART_EVERY] = {CONF_RESTART_EVERY, NULL, "restart-every", 0,
                            CONF_T_INT, "N", "0", NULL, 0, INT64_MAX, NULL,
                            NULL, CONF_PRODUCE,
                            "after every N records (0 = never): flush "
                            "(commit when transactional), destroy the "
                            "producer and start a new one: a new session "
                            "(a new producer id, a higher epoch, seqs from "
                            "0) that first "
                            "writes again the last records delivered before; "
                            "not with --zombie"},
    [CONF_RESTART_REPLAY] = {CONF_RESTART_REPLAY, NULL, "restart-replay", 0,
                             CONF_T_INT, "M",
                             CONF_STR(PRODUCER_REPLAY_DEFAULT), NULL, 0,
                             PRODUCER_REPLAY_MAX, NULL, NULL, CONF_PRODUCE,
                             "records written again after each restart "
                             "(0..1000000; never more than were delivered): "
                             "same key, value, id and partition, a new seq; "
                             "only the id tells them from new ones"},
    [CONF_SCOPE] = {CONF_SCOPE, NULL, "scope", 0, CONF_T_ENUM, "WHAT",
                    "partition", NULL, 0, 1, "partition|topic", NULL,
                    CONF_PRODUCE,
                    "what eos.seq numbers: partition (each partition of the "
                    "topic from 0, the producer picking partitions) or "
                    "topic (the whole topic from 0, stamped eos.scope: "
                    "topic, librdkafka's partitioner picking them, as a "
                    "producer that does not know partitions would); topic "
                    "not with --transactional-id or --zombie"},
    [CONF_UNKEYED] = {CONF_UNKEYED, NULL, "unkeyed", 0, CONF_T_FLAG, NULL,
                      NULL, NULL, 0, 0, NULL, NULL, CONF_PRODUCE,
                      "records without a key (needs --scope topic and "
                      "--msgid-from index or none)"},
    /* process: the reference processor (producer/process.h) */
    [CONF_PROC_SOURCE] = {CONF_PROC_SOURCE, NULL, "source", 0, CONF_T_LIST,
                          "TOPIC[,...]", NULL, "none; required", 1, 64, NULL,
                          NULL, CONF_PROCESS,
                          "the topics to read, in consumer group --group "
                          "(read_committed)"},
    [CONF_PROC_SINK] = {CONF_PROC_SINK, NULL, "sink", 0, CONF_T_STRING,
                        "TOPIC", NULL, "none; required", 1, 249, NULL, NULL,
                        CONF_PROCESS,
                        "the topic to write: every source record with its "
                        "value and headers"},
    [CONF_PROC_GROUP] = {CONF_PROC_GROUP, NULL, "group", 0, CONF_T_STRING,
                         "GROUP", NULL, "none; required", 1, 255, NULL, NULL,
                         CONF_PROCESS,
                         "the consumer group (scan --processor-group)"},
    [CONF_PROC_TXN_ID] = {CONF_PROC_TXN_ID, NULL, "transactional-id", 0,
                          CONF_T_STRING, "ID", NULL, "the group", 1, 65535,
                          NULL, NULL, CONF_PROCESS,
                          "exactly-once: the producer's transactional.id"},
    [CONF_PROC_MODE] = {CONF_PROC_MODE, NULL, "mode", 0, CONF_T_ENUM, "MODE",
                        "exactly-once", NULL, 0, 1,
                        "exactly-once|at-least-once", NULL, CONF_PROCESS,
                        "exactly-once: outputs and offsets in one "
                        "transaction; at-least-once: flush, then commit the "
                        "offsets (a crash between the two duplicates)"},
    [CONF_PROC_BATCH] = {CONF_PROC_BATCH, NULL, "batch", 0, CONF_T_INT, "N",
                         "500", NULL, 1, 1000000, NULL, NULL, CONF_PROCESS,
                         "records per transaction (or per offset commit)"},
    [CONF_PROC_CRASH_AFTER] = {CONF_PROC_CRASH_AFTER, NULL, "crash-after", 0,
                               CONF_T_INT, "N", "0", NULL, 0, INT64_MAX, NULL,
                               NULL, CONF_PROCESS,
                               "die like kill -9 after N records produced "
                               "(a forked session; exactly-once inside its "
                               "open transaction, at-least-once after a "
                               "flush and before the offset commit), then "
                               "restart; 0 = never"},
    [CONF_PROC_ABORT_EVERY] = {CONF_PROC_ABORT_EVERY, NULL, "abort-every", 0,
                               CONF_T_INT, "N", "0", NULL, 0, INT64_MAX, NULL,
                               NULL, CONF_PROCESS,
                               "exactly-once: abort every Nth transaction "
                               "after its records were produced, rewind and "
                               "process them again; 0 = never"},
    [CONF_PROC_DROP_EVERY] = {CONF_PROC_DROP_EVERY, NULL, "drop-every", 0,
                              CONF_T_INT, "N", "0", NULL, 0, INT64_MAX, NULL,
                              NULL, CONF_PROCESS,
                              "a lossy bug: produce nothing for the source "
                              "records whose offset % N is N - 1; 0 = never"},
    [CONF_PROC_REKEY] = {CONF_PROC_REKEY, NULL, "rekey", 0, CONF_T_FLAG, NULL,
                         NULL, NULL, 0, 0, NULL, NULL, CONF_PROCESS,
                         "write each record under another key (key + "
                         "\"/r\"), so that it lands on another partition"},
    [CONF_PROC_IDLE_EXIT_MS] = {CONF_PROC_IDLE_EXIT_MS, NULL, "idle-exit-ms",
                                0, CONF_T_INT, "N", "0", NULL, 0, INT64_MAX,
                                NULL, NULL, CONF_PROCESS,
                                "stop once no record came for N ms; 0 = run "
                                "until SIGINT or SIGTERM"},
    [CONF_PRODUCE_TXN_MANIFESTS] = {CONF_PRODUCE_TXN_MANIFESTS, NULL,
                                    "txn-manifests", 0, CONF_T_STRING, "TOPIC",
                                    NULL, NULL, 1, 249, NULL, NULL,
                                    CONF_PRODUCE,
                                    "with --transactional-id: stamp eos.txn "
                                    "on every record and write each "
                                    "committed transaction's manifest to "
                                    "TOPIC, in the transaction"},
    /* demo: the mock cluster, the producer and the audit (cmd/demo.c) */
    [CONF_DEMO_COUNT] = {CONF_DEMO_COUNT, NULL, "count", 'n', CONF_T_INT,
                         "COUNT", "20000", NULL, 1, 100000000, NULL, NULL,
                         CONF_DEMO, "records to produce"},
    [CONF_DEMO_RATE] = {CONF_DEMO_RATE, NULL, "rate", 0, CONF_T_DOUBLE, "N",
                        "4000", NULL, 0, 0, NULL, NULL, CONF_DEMO,
                        "records per second, 0 = unlimited", 0, 1e9},
    [CONF_DEMO_DB] = {CONF_DEMO_DB, NULL, "db", 0, CONF_T_STRING, "FILE", NULL,
                      "a temporary one", 1, CONF_PATH_MAX, NULL, NULL,
                      CONF_DEMO, "ledger file"},
    [CONF_DEMO_LISTEN] = {CONF_DEMO_LISTEN, NULL, "listen", 0, CONF_T_ADDR,
                          "ADDR:PORT", NULL, NULL, 0, 0, NULL, NULL, CONF_DEMO,
                          "serve the dashboard, /metrics and `/api/v1/...` "
                          "while the demo runs (e.g. 127.0.0.1:8080; port 0 "
                          "picks a free one) and print its URL; after the "
                          "comparison the demo keeps serving until Ctrl-C "
                          "(SIGINT) or SIGTERM, so that a person can look; "
                          "its exit status stays that of the comparison"},
    [CONF_NO_LINGER] = {CONF_NO_LINGER, NULL, "no-linger", 0, CONF_T_FLAG,
                        NULL, NULL, NULL, 0, 0, NULL, NULL, CONF_DEMO,
                        "with --listen: exit right after the comparison"},
    /* produce and demo */
    [CONF_SEED] = {CONF_SEED, NULL, "seed", 0, CONF_T_U64, "N", "1", NULL, 0,
                   0, NULL, NULL, CONF_PRODUCE | CONF_DEMO,
                   "seed of the injected faults: they are a function of it"},
    [CONF_PRODUCE_KAFKA] = {CONF_PRODUCE_KAFKA, NULL, NULL, 'X', CONF_T_KAFKA,
                            "KEY=VALUE", NULL, NULL, 0, 0, NULL, NULL,
                            CONF_PRODUCE,
                            "librdkafka property (repeatable; after -F); "
                            "before them: enable.idempotence=true acks=all "
                            "max.in.flight.requests.per.connection=5 "
                            "message.send.max.retries=2147483647 linger.ms=5 "
                            "(statistics.interval.ms=100 when "
                            "transactional)"},
    [CONF_PRODUCE_PROPERTIES_FILE] = {CONF_PRODUCE_PROPERTIES_FILE, NULL, NULL,
                                      'F', CONF_T_STRING, "FILE", NULL, NULL,
                                      1, CONF_PATH_MAX, NULL, NULL,
                                      CONF_PRODUCE | CONF_PROCESS,
                                      "librdkafka properties file: "
                                      "key=value lines, # comments; secrets "
                                      "go here, never in -X"},
    [CONF_PROCESS_KAFKA] = {CONF_PROCESS_KAFKA, NULL, NULL, 'X', CONF_T_KAFKA,
                            "KEY=VALUE", NULL, NULL, 0, 0, NULL, NULL,
                            CONF_PROCESS,
                            "librdkafka property of both clients "
                            "(repeatable; after -F, before -b); then "
                            "set over them: enable.idempotence=true "
                            "linger.ms=5 (and transactional.id, with "
                            "--mode exactly-once) on the producer, "
                            "group.id=GROUP enable.auto.commit=false "
                            "isolation.level=read_committed "
                            "auto.offset.reset=earliest on the consumer "
                            "(its session.timeout.ms=6000 comes before "
                            "-F)"},
    [CONF_JSON] = {CONF_JSON, NULL, "json", 0, CONF_T_FLAG, NULL, NULL, NULL,
                   0, 0, NULL, NULL, CONF_SCAN,
                   "print one JSON object on stdout"},
    [CONF_PRODUCE_JSON] = {CONF_PRODUCE_JSON, NULL, "json", 0, CONF_T_FLAG,
                           NULL, NULL, NULL, 0, 0, NULL, NULL, CONF_PRODUCE,
                           "also print the summary as JSON on stdout; its "
                           "redelivered_injected counts the records "
                           "--restart-replay wrote again, its "
                           "unconfirmed the writes librdkafka reported "
                           "delivered without an offset (acked implicitly "
                           "because a later batch succeeded after an "
                           "earlier one failed): they may be missing from "
                           "the log, are counted neither delivered nor "
                           "failed, and make the exit status 1"},
    [CONF_NO_PROGRESS] = {CONF_NO_PROGRESS, NULL, "no-progress", 0,
                          CONF_T_FLAG, NULL, NULL, NULL, 0, 0, NULL, NULL,
                          CONF_SCAN, "no progress line on stderr"},
    [CONF_QUIET] = {CONF_QUIET, NULL, "quiet", 'q', CONF_T_FLAG, NULL, NULL,
                    NULL, 0, 0, NULL, NULL, CONF_CMDS,
                    "only errors on stderr: no warnings, no librdkafka log "
                    "(scan, serve: --log-level error)"},
    [CONF_VERBOSE] = {CONF_VERBOSE, NULL, "verbose", 'v', CONF_T_FLAG, NULL,
                      NULL, NULL, 0, 0, NULL, NULL, CONF_SV,
                      "debug logging (--log-level debug)"},
    [CONF_HELP] = {CONF_HELP, NULL, "help", 'h', CONF_T_FLAG, NULL, NULL, NULL,
                   0, 0, NULL, NULL, CONF_CMDS,
                   "print the command's options and exit"},
};

/* The introduction of the documentation, one paragraph per string. */
const char *const conf_doc_intro[] = {
    "`eosaudit serve --config FILE` (and `scan --config FILE`) read their "
    "settings from FILE. It holds `key = value` lines; blanks around key and "
    "value are trimmed, and empty lines and lines whose first non-blank "
    "character is `#` are comments (a `#` anywhere else belongs to the "
    "value, so a password may hold one).",
    "Each key may appear once. Values are checked as the flags' values are: "
    "an unknown or repeated key, a bad number or a value out of range stops "
    "eosaudit with `FILE:LINE: message`. Flags on the command line override "
    "the file; the table's defaults apply to what neither sets. Relative "
    "paths are relative to the working directory, not to the file.",
    "librdkafka properties go as `kafka.PROPERTY = VALUE` lines. They apply "
    "after kafka-properties-file (or -F) and before -X flags; brokers and "
    "isolation, when set, override bootstrap.servers and isolation.level.",
};
const size_t conf_doc_intro_cnt = sizeof(conf_doc_intro) /
                                  sizeof(conf_doc_intro[0]);
