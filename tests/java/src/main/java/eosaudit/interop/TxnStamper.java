package eosaudit.interop;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A transactional producer that stamps exactly what schema/HEADERS.md
 * ("Transactions v2") asks of one: eos.producer = the transactional.id,
 * eos.pid and eos.epoch = the producer id and epoch the broker assigned
 * (with transactions v2 the epoch goes up at every commit and abort, and a
 * new producer id comes at epoch 0 when it runs out), eos.seq from 0 per
 * (epoch, partition), and on the first record of each new epoch on a
 * partition eos.prev_epoch and eos.prev_seq: the epoch and seq of the last
 * record stamped on that partition before.  With transactions v1 (the
 * epoch stays put) the seqs simply go on.
 *
 * usage: TxnStamper BOOTSTRAP TOPIC TRANSACTIONAL_ID TXNS RECORDS_PER_TXN [DROP_TXN]
 *
 * Records go round-robin over the topic's partitions.  DROP_TXN (0-based;
 * absent or -1: none): the last record of that transaction is stamped but
 * never sent - a record lost at the end of a transaction, which the next
 * epoch's eos.prev_* must reveal.
 *
 * stdout: "sent=N txns=T dropped=D pid_changes=P epochs=FIRST-LAST
 *          epoch_changes=E transaction_v2=BOOL"
 * exit: 0 ok; 1 error (or the broker's epoch could not be read).
 */
public final class TxnStamper {
    private static final String H_PID = "eos.pid";
    private static final String H_PREV_EPOCH = "eos.prev_epoch";
    private static final String H_PREV_SEQ = "eos.prev_seq";

    private TxnStamper() {}

    private static ProducerRecord<byte[], byte[]> stamp(String topic, int part, String name,
                                                        long pid, long epoch, long seq,
                                                        long prevEpoch, long prevSeq) {
        ProducerRecord<byte[], byte[]> r = Eos.record(topic, part, name, epoch, seq);
        Headers h = r.headers();
        h.add(H_PID, Eos.ascii(pid));
        if (prevEpoch >= 0) {
            h.add(H_PREV_EPOCH, Eos.ascii(prevEpoch));
            h.add(H_PREV_SEQ, Eos.ascii(prevSeq));
        }
        return r;
    }

    public static void main(String[] args) {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: TxnStamper BOOTSTRAP TOPIC TRANSACTIONAL_ID TXNS RECORDS_PER_TXN [DROP_TXN]");
            System.exit(2);
        }
        String topic = args[1], txnId = args[2];
        int txns = Integer.parseInt(args[3]);
        int perTxn = Integer.parseInt(args[4]);
        int dropTxn = args.length == 6 ? Integer.parseInt(args[5]) : -1;
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        long sent = 0, dropped = 0, pidChanges = 0, epochChanges = 0;
        long firstEpoch = -1, curPid = -1, curEpoch = -1;
        Boolean tv2 = null;
        int rc = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            tv2 = Eos.transactionV2(producer);
            int nparts = producer.partitionsFor(topic).size();
            long[] nextSeq = new long[nparts];
            long[] lastEpoch = new long[nparts], lastSeq = new long[nparts];
            boolean[] fresh = new boolean[nparts]; // no record yet in this epoch
            java.util.Arrays.fill(lastEpoch, -1);
            java.util.Arrays.fill(lastSeq, -1);
            int rr = 0;
            for (int t = 0; t < txns; t++) {
                long[] pe = Eos.producerIdAndEpoch(producer);
                if (pe == null) throw new IllegalStateException("cannot read the producer epoch");
                if (pe[0] != curPid || pe[1] != curEpoch) {
                    if (curPid >= 0 && pe[0] != curPid) pidChanges++;
                    if (curEpoch >= 0) epochChanges++;
                    curPid = pe[0];
                    curEpoch = pe[1];
                    java.util.Arrays.fill(nextSeq, 0);
                    java.util.Arrays.fill(fresh, true);
                }
                if (firstEpoch < 0) firstEpoch = curEpoch;
                producer.beginTransaction();
                for (int i = 0; i < perTxn; i++) {
                    int part = rr++ % nparts;
                    long seq = nextSeq[part]++;
                    long prevE = -1, prevS = -1;
                    if (fresh[part] && lastEpoch[part] >= 0 && lastEpoch[part] != curEpoch) {
                        prevE = lastEpoch[part];
                        prevS = lastSeq[part];
                    }
                    fresh[part] = false;
                    lastEpoch[part] = curEpoch;
                    lastSeq[part] = seq;
                    ProducerRecord<byte[], byte[]> r =
                            stamp(topic, part, txnId, curPid, curEpoch, seq, prevE, prevS);
                    if (t == dropTxn && i == perTxn - 1) {
                        dropped++;
                        continue; // stamped, never sent: lost at the end of the transaction
                    }
                    producer.send(r);
                    sent++;
                }
                producer.commitTransaction();
            }
            producer.close(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            System.err.println("error: " + Eos.chain(e));
            rc = 1;
        }
        System.out.println("sent=" + sent + " txns=" + txns + " dropped=" + dropped
                + " pid_changes=" + pidChanges + " epochs=" + firstEpoch + "-" + curEpoch
                + " epoch_changes=" + epochChanges + " transaction_v2=" + tv2);
        System.exit(rc);
    }
}
