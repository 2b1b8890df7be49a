package io.eosaudit.interceptor;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stamps eosaudit's eos.* headers on every record a Java producer sends,
 * by configuration alone:
 *
 * <pre>
 * interceptor.classes=io.eosaudit.interceptor.EosAuditInterceptor
 * eos.producer=orders-writer-1
 * </pre>
 *
 * onSend runs before the partitioner, so the interceptor cannot know a
 * record's partition: it numbers one stream per (eos.producer, eos.epoch,
 * topic) and says so with {@code eos.scope: topic} (schema/HEADERS.md).
 * The audit reconciles such a stream across the topic's partitions.
 *
 * Invariants: within one interceptor, each topic's seqs are handed out
 * once each, densely from 0 (but for the test-only skips), whatever the
 * number of threads sending; the stamps replace any eos.* header the
 * record came with; a record is never refused, and a record the
 * interceptor fails to stamp goes out as it came (untracked).
 *
 * Thread-safety: onSend may be called from any number of threads at once
 * (the producer's send()); configure and close by the producer only.
 */
public class EosAuditInterceptor implements ProducerInterceptor<Object, Object> {
    private static final Logger log = LoggerFactory.getLogger(EosAuditInterceptor.class);

    static final String H_PRODUCER = "eos.producer";
    static final String H_EPOCH = "eos.epoch";
    static final String H_SEQ = "eos.seq";
    static final String H_SCOPE = "eos.scope";
    static final String H_MSGID = "eos.msgid";
    private static final byte[] SCOPE_TOPIC = "topic".getBytes(StandardCharsets.US_ASCII);

    private InterceptorConfig conf;
    private byte[] producerBytes;
    private byte[] epochBytes;
    private final ConcurrentHashMap<String, AtomicLong> seqs = new ConcurrentHashMap<>();
    private final AtomicLong stamped = new AtomicLong();
    private final AtomicLong unstamped = new AtomicLong();
    private final AtomicLong failedSends = new AtomicLong();

    @Override
    public void configure(Map<String, ?> configs) {
        conf = InterceptorConfig.parse(configs);
        producerBytes = conf.producer.getBytes(StandardCharsets.UTF_8);
        epochBytes = Long.toString(conf.epoch).getBytes(StandardCharsets.US_ASCII);
        log.info("eosaudit-interceptor: stamping as eos.producer={} eos.epoch={} ({}), "
                 + "eos.msgid: {}, topic-scoped seqs", conf.producer, conf.epoch,
                 conf.epochSource, conf.msgid.describe());
        if (conf.transactionalId != null) {
            log.warn("eosaudit-interceptor: transactional.id={} is set: the interceptor sees "
                     + "sends, not commits or aborts, so the records of aborted transactions "
                     + "show as missing; audit this producer with the flow audit or the "
                     + "reference stamping instead (docs/INTERCEPTOR.md)",
                     conf.transactionalId);
        }
        if (conf.skipEvery > 0) {
            log.warn("eosaudit-interceptor: eos.test.skip.every={}: every {}th seq is left out "
                     + "on purpose, so the audit reports it missing (tests only)",
                     conf.skipEvery, conf.skipEvery);
        }
    }

    @Override
    public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
        try {
            return stamp(record);
        } catch (RuntimeException | Error e) {
            if (e instanceof VirtualMachineError) throw (VirtualMachineError) e;
            long n = unstamped.incrementAndGet();
            /* Every power of two: one line for a rare failure, a few for a
             * persistent one, never a line per record. */
            if ((n & (n - 1)) == 0) {
                log.warn("eosaudit-interceptor: record to topic {} sent unstamped "
                         + "({} so far): {}", record == null ? null : record.topic(), n,
                         e.toString());
            }
            return record;
        }
    }

    private ProducerRecord<Object, Object> stamp(ProducerRecord<Object, Object> record) {
        InterceptorConfig c = conf;
        if (c == null) throw new IllegalStateException("onSend before configure");
        String topic = record.topic();
        byte[] msgid = c.msgid.extract(record);

        /* A copy: the caller's record (and its headers, read-only once sent)
         * stay as they were, so an application that sends one record object
         * twice gets two stamps, and one that inspects it sees no change. */
        ProducerRecord<Object, Object> out = new ProducerRecord<>(topic, record.partition(),
                record.timestamp(), record.key(), record.value());
        Headers h = out.headers();
        for (Header old : record.headers()) {
            if (!old.key().startsWith("eos.")) h.add(old);
        }
        h.add(H_PRODUCER, producerBytes);
        h.add(H_EPOCH, epochBytes);
        h.add(H_SCOPE, SCOPE_TOPIC);
        if (msgid != null) h.add(H_MSGID, msgid);
        /* The seq last: whatever failed above used none, so an unstamped
         * record leaves no hole in the stream. */
        h.add(H_SEQ, Long.toString(nextSeq(topic, c.skipEvery)).getBytes(StandardCharsets.US_ASCII));
        stamped.incrementAndGet();
        return out;
    }

    /* The next seq of TOPIC's stream.  With skipEvery = N, the seqs N-1,
     * 2N-1, ... are never handed out (tests: each one is a record the audit
     * must call missing). */
    private long nextSeq(String topic, long skipEvery) {
        AtomicLong ctr = seqs.get(topic);
        if (ctr == null) ctr = seqs.computeIfAbsent(topic, t -> new AtomicLong());
        long s;
        do {
            s = ctr.getAndIncrement();
        } while (skipEvery > 0 && (s + 1) % skipEvery == 0);
        return s;
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
        /* A stamped record that failed for good keeps its seq: the audit
         * will call it missing, which it is.  Counted for close()'s line. */
        if (exception != null) failedSends.incrementAndGet();
    }

    @Override
    public void close() {
        if (conf == null) return;
        log.info("eosaudit-interceptor: eos.producer={} eos.epoch={}: {} records stamped, "
                 + "{} sent unstamped, {} sends failed", conf.producer, conf.epoch,
                 stamped.get(), unstamped.get(), failedSends.get());
    }
}
