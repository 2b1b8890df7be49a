package eosaudit.interop;

import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams application that only re-keys its records: the subject
 * of the flow audit (tests/integration/t_73_flow_streams.sh).
 *
 * usage: StreamsRekey BOOTSTRAP SOURCE SINK APPLICATION_ID GUARANTEE STATE_DIR
 *
 * GUARANTEE: exactly_once_v2 or at_least_once.  Every record goes to SINK
 * under key + "/r" (another partition), value unchanged; Kafka Streams
 * forwards the headers, eos.msgid included.  Prints "state=RUNNING" once
 * running; SIGTERM closes it cleanly (a commit); SIGKILL is the crash.
 */
public final class StreamsRekey {
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: StreamsRekey BOOTSTRAP SOURCE SINK APPLICATION_ID GUARANTEE STATE_DIR");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[3]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[4]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[5]);
        /* at_least_once commits every 30 s by default: a kill then
         * replays up to 30 s of records.  1 s keeps the test short and the
         * duplicates few but likely. */
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG,
              args[4].equals("at_least_once") ? "1000" : "100");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        /* A restart after SIGKILL waits for the dead member's session. */
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "6000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");

        StreamsBuilder b = new StreamsBuilder();
        b.stream(args[1], Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .selectKey((k, v) -> {
                    byte[] kk = k == null ? new byte[0] : k;
                    byte[] n = new byte[kk.length + 2];
                    System.arraycopy(kk, 0, n, 0, kk.length);
                    n[kk.length] = '/';
                    n[kk.length + 1] = 'r';
                    return n;
                })
                .to(args[2], Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));

        KafkaStreams ks = new KafkaStreams(b.build(), p);
        CountDownLatch done = new CountDownLatch(1);
        ks.setStateListener((now, before) -> {
            System.out.println("state=" + now);
            System.out.flush();
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ks.close();
            done.countDown();
        }));
        ks.start();
        done.await();
    }
}
