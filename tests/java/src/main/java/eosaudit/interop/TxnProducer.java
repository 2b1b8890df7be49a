package eosaudit.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Transactional producer.
 *
 * usage: TxnProducer BOOTSTRAP TOPIC TRANSACTIONAL_ID TXNS RECORDS_PER_TXN ABORT_EVERY
 *                    [--zombie] [--partitions N]
 *
 * Every ABORT_EVERY-th transaction (1-based; 0 = never) is aborted.
 * Headers: eos.producer = transactional.id, eos.epoch = the producer epoch the
 * broker assigned (read by reflection from the client; see Eos), eos.seq =
 * per (epoch, partition) from 0. After an abort the next transaction reuses
 * the aborted sequence numbers (if the epoch did not change; on a broker with
 * transaction.version=2 every commit/abort bumps the epoch, so each
 * transaction starts at seq 0 under its own epoch anyway).
 *
 * --zombie: instance A runs TXNS transactions, then instance B with the same
 * transactional.id calls initTransactions (fencing A) and runs TXNS
 * transactions, then A tries one more transaction of RECORDS_PER_TXN records,
 * which must fail as fenced.
 *
 * stdout: "committed=N aborted=M fenced=F zombie_attempted=Z" and an info line.
 * exit: 0 ok; 1 unexpected error; 3 --zombie but A was not fenced.
 */
public final class TxnProducer {
    private final String bootstrap, topic, txnId;
    private int nparts;
    private long committed, aborted, zombieAttempted;
    private int txnCounter;
    private String epochSource = "reflection";
    private Boolean tv2;
    /** Next eos.seq per epoch, per partition. */
    private final Map<Long, long[]> seqByEpoch = new HashMap<>();
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
            long[] seq = seqByEpoch.computeIfAbsent(epoch, e -> new long[nparts]);
            long[] snapshot = seq.clone();
            AtomicReference<Exception> err = new AtomicReference<>();
            int n = 0;
            try {
                stage = "send";
                for (int j = 0; j < records; j++) {
                    int part = rr++ % nparts;
                    producer.send(Eos.record(topic, part, txnId, epoch, seq[part]++), (md, e) -> {
                        if (e != null) err.compareAndSet(null, e);
                    });
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
                    stage = "commitTransaction";
                    producer.commitTransaction();
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
                System.arraycopy(snapshot, 0, seq, 0, seq.length); // reuse the aborted seqs
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

    public static void main(String[] args) {
        List<String> pos = new ArrayList<>();
        boolean zombie = false;
        int partsOpt = 0;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--zombie")) zombie = true;
            else if (args[i].equals("--partitions") && i + 1 < args.length) partsOpt = Integer.parseInt(args[++i]);
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
        } catch (RuntimeException e) {
            System.err.println("error: " + Eos.chain(e));
            rc = 1;
        } finally {
            if (a != null) a.close();
            if (b != null) b.close();
        }
        System.out.println("committed=" + t.committed + " aborted=" + t.aborted
                + " fenced=" + fenced + " zombie_attempted=" + t.zombieAttempted);
        System.out.println("epoch_source=" + t.epochSource + " transaction_v2=" + t.tv2
                + " epochs=" + String.join(",", t.epochLog));
        System.exit(rc);
    }
}
