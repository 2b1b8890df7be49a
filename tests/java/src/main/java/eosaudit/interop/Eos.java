package eosaudit.interop;

import java.nio.charset.StandardCharsets;
import java.lang.reflect.Field;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;

/** Header contract shared by the interop producers. */
final class Eos {
    static final String H_PRODUCER = "eos.producer";
    static final String H_EPOCH = "eos.epoch";
    static final String H_SEQ = "eos.seq";
    static final int VALUE_SIZE = 100;

    private Eos() {}

    static byte[] ascii(long n) {
        return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
    }

    static ProducerRecord<byte[], byte[]> record(String topic, int partition, String producer,
                                                 long epoch, long seq) {
        StringBuilder v = new StringBuilder(VALUE_SIZE);
        v.append("producer=").append(producer).append(" epoch=").append(epoch)
         .append(" partition=").append(partition).append(" seq=").append(seq).append(' ');
        while (v.length() < VALUE_SIZE) v.append('x');
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, partition, null,
                v.toString().getBytes(StandardCharsets.UTF_8));
        Headers h = r.headers();
        h.add(H_PRODUCER, producer.getBytes(StandardCharsets.UTF_8));
        h.add(H_EPOCH, ascii(epoch));
        h.add(H_SEQ, ascii(seq));
        return r;
    }

    /**
     * The producer epoch the broker assigned, read by reflection from
     * KafkaProducer.transactionManager.producerIdAndEpoch (kafka-clients has
     * no public API for it). Returns null if that fails.
     */
    static long[] producerIdAndEpoch(KafkaProducer<?, ?> p) {
        try {
            Field tmF = KafkaProducer.class.getDeclaredField("transactionManager");
            tmF.setAccessible(true);
            Object tm = tmF.get(p);
            if (tm == null) return null;
            Field pieF = tm.getClass().getDeclaredField("producerIdAndEpoch");
            pieF.setAccessible(true);
            Object pie = pieF.get(tm);
            long pid = pie.getClass().getField("producerId").getLong(pie);
            long epoch = pie.getClass().getField("epoch").getShort(pie);
            return new long[] {pid, epoch};
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** Whether the client negotiated transactions v2 (KIP-890: epoch bump per transaction). */
    static Boolean transactionV2(KafkaProducer<?, ?> p) {
        try {
            Field tmF = KafkaProducer.class.getDeclaredField("transactionManager");
            tmF.setAccessible(true);
            Object tm = tmF.get(p);
            if (tm == null) return null;
            return (Boolean) tm.getClass().getMethod("isTransactionV2Enabled").invoke(tm);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    static String chain(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (sb.length() > 0) sb.append(" <- ");
            sb.append(c.getClass().getName());
            if (c.getMessage() != null) sb.append(": ").append(c.getMessage());
            if (c.getCause() == c) break;
        }
        return sb.toString();
    }

    static boolean isFenced(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof org.apache.kafka.common.errors.ProducerFencedException
                    || c instanceof org.apache.kafka.common.errors.InvalidProducerEpochException) {
                return true;
            }
            if (c.getCause() == c) break;
        }
        return false;
    }
}
