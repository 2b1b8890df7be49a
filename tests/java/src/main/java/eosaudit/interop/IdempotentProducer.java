package eosaudit.interop;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Idempotent (non-transactional) producer, Kafka-docs settings.
 *
 * usage: IdempotentProducer BOOTSTRAP TOPIC PRODUCER_NAME COUNT [PARTITIONS] [EPOCH]
 *
 * PARTITIONS: how many partitions to spread over (0 or absent: all of the
 * topic's, from partitionsFor). EPOCH: the session number stamped in
 * eos.epoch (default 0). Records go round robin over the partitions; eos.seq
 * counts from 0 per partition. Prints "delivered=N failed=M".
 */
public final class IdempotentProducer {
    public static void main(String[] args) throws Exception {
        if (args.length < 4 || args.length > 6) {
            System.err.println("usage: IdempotentProducer BOOTSTRAP TOPIC PRODUCER_NAME COUNT [PARTITIONS] [EPOCH]");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1], name = args[2];
        long count = Long.parseLong(args[3]);
        int hint = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        long epoch = args.length > 5 ? Long.parseLong(args[5]) : 0;

        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "eosaudit-idem-" + name);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.RETRIES_CONFIG, Integer.toString(Integer.MAX_VALUE));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        AtomicLong delivered = new AtomicLong(), failed = new AtomicLong();
        AtomicReference<Exception> firstError = new AtomicReference<>();
        int nparts;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<PartitionInfo> parts = producer.partitionsFor(topic);
            int actual = parts.size();
            if (hint > actual) {
                System.err.println("topic " + topic + " has " + actual + " partitions, fewer than " + hint);
                System.exit(2);
            }
            nparts = hint > 0 ? hint : actual;
            long[] seq = new long[nparts];
            for (long i = 0; i < count; i++) {
                int part = (int) (i % nparts);
                producer.send(Eos.record(topic, part, name, epoch, seq[part]++), (md, e) -> {
                    if (e == null) {
                        delivered.incrementAndGet();
                    } else {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        } catch (Exception e) {
            System.err.println("error: " + Eos.chain(e));
            System.out.println("delivered=" + delivered.get() + " failed=" + (count - delivered.get()));
            System.exit(1);
        }
        if (firstError.get() != null) System.err.println("first error: " + Eos.chain(firstError.get()));
        System.out.println("delivered=" + delivered.get() + " failed=" + failed.get());
        System.exit(failed.get() == 0 && delivered.get() == count ? 0 : 1);
    }
}
