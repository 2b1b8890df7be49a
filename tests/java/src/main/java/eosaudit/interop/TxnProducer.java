package eosaudit.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.ProducerRecord;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Transactional producer.
 *
 * usage: TxnProducer BOOTSTRAP TOPIC TRANSACTIONAL_ID TXNS RECORDS_PER_TXN ABORT_EVERY
 *                    [--zombie] [--partitions N] [--topic2 TOPIC2]
 *                    [--txn-manifests MANIFEST_TOPIC]
 *
 * Every ABORT_EVERY-th transaction (1-based; 0 = never) is aborted.
 * Headers: eos.producer = transactional.id, eos.epoch = the producer epoch the
 * broker assigned (read by reflection from the client; see Eos), eos.seq =
 * per (epoch, partition) from 0. After an abort the next transaction reuses
 * the aborted sequence numbers (if the epoch did not change; on a broker with
 * transaction.version=2 every commit/abort bumps the epoch, so each
 * transaction starts at seq 0 under its own epoch anyway).
 *
 * --topic2: every other record of a transaction goes to TOPIC2 (same partition
 * count as TOPIC), so each transaction spans two topics.
 *
 * --txn-manifests (schema/HEADERS.md "Transactions"): every record carries
 * eos.txn, the transaction's ordinal in the run, and each transaction that
 * commits writes, as its last write, its manifest to MANIFEST_TOPIC (keyed by
 * the transactional.id): {"v":1,"producer":ID,"epoch":E,"txn":N,
 * "parts":[[TOPIC,PARTITION,RECORDS],...],"aborted":[[E,N],...]}, the
 * aborted ones being those aborted since the previous manifest.  Aborted
 * transactions left unnamed at the end get a manifest-only transaction.
 *
 * --zombie: instance A runs TXNS transactions, then instance B with the same
 * transactional.id calls initTransactions (fencing A) and runs TXNS
 * transactions, then A tries one more transaction of RECORDS_PER_TXN records,
 * which must fail as fenced.
 *
 * stdout: "committed=N aborted=M fenced=F zombie_attempted=Z manifests=K" and an
 * info line.
 * exit: 0 ok; 1 unexpected error; 3 --zombie but A was not fenced.
 */
public final class TxnProducer {
    private final String bootstrap, topic, txnId;
    private String topic2, manifests;
    private long manifestsWritten;
    /** (epoch, txn) of the transactions aborted since the last manifest. */
    private final List<long[]> pendingAborted = new ArrayList<>();
    private int nparts;
    private long committed, aborted, zombieAttempted;
    private int txnCounter;
    private String epochSource = "reflection";
    private Boolean tv2;
    /** Next eos.seq per epoch, per "topic/partition". */
    private final Map<Long, Map<String, Long>> seqByEpoch = new HashMap<>();
    private final List<String> epochLog = new ArrayList<>();

    private TxnProducer(String bootstrap, String topic, String txnId) {
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.txnId = txnId;
    }

    private final class Session {
        final String label;
        final long fallbackEpoch;
        final KafkaProducer<byte[], byte[]> producer;
        int rr;
        String stage = "";
        long firstEpoch = -1, lastEpoch = -1;

        Session(String label, long fallbackEpoch) {
            this.label = label;
            this.fallbackEpoch = fallbackEpoch;
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "eosaudit-txn-" + txnId + "-" + label);
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
            p.put(ProducerConfig.RETRIES_CONFIG, Integer.toString(Integer.MAX_VALUE));
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            producer = new KafkaProducer<>(p);
            producer.initTransactions();
            if (tv2 == null) tv2 = Eos.transactionV2(producer);
            if (nparts == 0) nparts = producer.partitionsFor(topic).size();
            if (topic2 != null && producer.partitionsFor(topic2).size() != nparts)
                throw new IllegalStateException("--topic2 needs " + nparts + " partitions");
        }

        private byte[] manifest(long epoch, long txn, Map<String, Long> counts) {
            StringBuilder m = new StringBuilder("{\"v\":1,\"producer\":")
                    .append(jsonString(txnId)).append(",\"epoch\":").append(epoch)
                    .append(",\"txn\":").append(txn).append(",\"parts\":[");
            String sep = "";
            for (Map.Entry<String, Long> e : counts.entrySet()) {
                int slash = e.getKey().lastIndexOf('/');
                m.append(sep).append('[').append(jsonString(e.getKey().substring(0, slash)))
                 .append(',').append(e.getKey().substring(slash + 1)).append(',')
                 .append(e.getValue()).append(']');
                sep = ",";
            }
            m.append("],\"aborted\":[");
            sep = "";
            for (long[] k : pendingAborted) {
                m.append(sep).append('[').append(k[0]).append(',').append(k[1]).append(']');
                sep = ",";
            }
            return m.append("]}").toString().getBytes(StandardCharsets.UTF_8);
        }

        /** A transaction that only names the aborted ones still unnamed. */
        void manifestOnly() {
            producer.beginTransaction();
            long epoch = epoch();
            producer.send(new ProducerRecord<>(manifests, txnId.getBytes(StandardCharsets.UTF_8),
                    manifest(epoch, txnCounter, new TreeMap<>())));
            producer.commitTransaction();
            txnCounter++;
            manifestsWritten++;
            pendingAborted.clear();
        }

        long epoch() {
            long[] pe = Eos.producerIdAndEpoch(producer);
            if (pe == null || pe[1] < 0) {
                epochSource = "session-counter";
                return fallbackEpoch;
            }
            return pe[1];
        }

        /** Runs one transaction; returns normally only if it committed/aborted as asked. */
        void txn(int records, boolean abort, boolean zombie) {
            stage = "beginTransaction";
            producer.beginTransaction();
            long epoch = epoch();
            if (firstEpoch < 0) firstEpoch = epoch;
            lastEpoch = epoch;
            Map<String, Long> seq = seqByEpoch.computeIfAbsent(epoch, e -> new HashMap<>());
            Map<String, Long> snapshot = new HashMap<>(seq);
            Map<String, Long> counts = new TreeMap<>();
            long ord = txnCounter;
            AtomicReference<Exception> err = new AtomicReference<>();
            int n = 0;
            try {
                stage = "send";
                for (int j = 0; j < records; j++) {
                    String t = topic2 != null && j % 2 == 1 ? topic2 : topic;
                    int part = rr++ % nparts;
                    String tp = t + "/" + part;
                    long sq = seq.merge(tp, 1L, Long::sum) - 1;
                    ProducerRecord<byte[], byte[]> r = Eos.record(t, part, txnId, epoch, sq);
                    if (manifests != null)
                        r.headers().add("eos.txn", Eos.ascii(ord));
                    producer.send(r, (md, e) -> {
                        if (e != null) err.compareAndSet(null, e);
                    });
                    counts.merge(tp, 1L, Long::sum);
                    n++;
                }
                if (abort) {
                    // Without the flush the client drops still-unsent batches on
                    // abort; flush so the aborted records really are in the log.
                    stage = "flush";
                    producer.flush();
                    stage = "abortTransaction";
                    producer.abortTransaction();
                } else {
                    if (manifests != null) {
                        // The last write of the transaction, in it.
                        stage = "manifest";
                        producer.send(new ProducerRecord<>(manifests,
                                txnId.getBytes(StandardCharsets.UTF_8),
                                manifest(epoch, ord, counts)));
                    }
                    stage = "commitTransaction";
                    producer.commitTransaction();
                    if (manifests != null) {
                        manifestsWritten++;
                        pendingAborted.clear();
                    }
                }
            } catch (RuntimeException e) {
                if (zombie) zombieAttempted += n;
                throw e;
            }
            txnCounter++;
            if (err.get() != null) {
                System.err.println("warning: send error in aborted transaction: " + Eos.chain(err.get()));
            }
            if (abort) {
                aborted += n;
                pendingAborted.add(new long[] {epoch, ord});
                seq.clear();
                seq.putAll(snapshot); // reuse the aborted seqs
            } else {
                committed += n;
            }
            System.err.printf("txn %d instance %s epoch %d %s %d records%n",
                    txnCounter, label, epoch, abort ? "aborted" : "committed", n);
        }

        void close() {
            try {
                producer.close(Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                System.err.println("close " + label + ": " + Eos.chain(e));
            }
        }
    }

    private void runTxns(Session s, int txns, int perTxn, int abortEvery) {
        for (int i = 0; i < txns; i++) {
            boolean abort = abortEvery > 0 && (txnCounter + 1) % abortEvery == 0;
            s.txn(perTxn, abort, false);
        }
        epochLog.add(s.label + ":" + s.firstEpoch + "-" + s.lastEpoch);
    }

    static String jsonString(String v) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : v.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) {
        List<String> pos = new ArrayList<>();
        boolean zombie = false;
        int partsOpt = 0;
        String topic2Opt = null, manifestsOpt = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--zombie")) zombie = true;
            else if (args[i].equals("--partitions") && i + 1 < args.length) partsOpt = Integer.parseInt(args[++i]);
            else if (args[i].equals("--topic2") && i + 1 < args.length) topic2Opt = args[++i];
            else if (args[i].equals("--txn-manifests") && i + 1 < args.length) manifestsOpt = args[++i];
            else pos.add(args[i]);
        }
        if (pos.size() != 6) {
            System.err.println("usage: TxnProducer BOOTSTRAP TOPIC TRANSACTIONAL_ID TXNS RECORDS_PER_TXN ABORT_EVERY [--zombie] [--partitions N]");
            System.exit(2);
        }
        TxnProducer t = new TxnProducer(pos.get(0), pos.get(1), pos.get(2));
        int txns = Integer.parseInt(pos.get(3));
        int perTxn = Integer.parseInt(pos.get(4));
        int abortEvery = Integer.parseInt(pos.get(5));
        t.nparts = partsOpt;
        t.topic2 = topic2Opt;
        t.manifests = manifestsOpt;
        int rc = 0;
        int fenced = 0;
        Session a = null, b = null;
        try {
            a = t.new Session("A", 0);
            t.runTxns(a, txns, perTxn, abortEvery);
            if (zombie) {
                b = t.new Session("B", 1);   // initTransactions bumps the epoch: A is now a zombie
                t.runTxns(b, txns, perTxn, abortEvery);
                try {
                    a.txn(perTxn, false, true);
                    System.err.println("zombie: instance A committed after being fenced (unexpected)");
                    rc = 3;
                } catch (RuntimeException e) {
                    System.err.println("zombie: instance A got, in " + a.stage + ": " + Eos.chain(e));
                    if (Eos.isFenced(e)) {
                        fenced = 1;
                    } else {
                        rc = 3;
                    }
                }
            }
            if (t.manifests != null && !t.pendingAborted.isEmpty())
                (b != null ? b : a).manifestOnly();
        } catch (RuntimeException e) {
            System.err.println("error: " + Eos.chain(e));
            rc = 1;
        } finally {
            if (a != null) a.close();
            if (b != null) b.close();
        }
        System.out.println("committed=" + t.committed + " aborted=" + t.aborted
                + " fenced=" + fenced + " zombie_attempted=" + t.zombieAttempted
                + " manifests=" + t.manifestsWritten);
        System.out.println("epoch_source=" + t.epochSource + " transaction_v2=" + t.tv2
                + " epochs=" + String.join(",", t.epochLog));
        System.exit(rc);
    }
}
