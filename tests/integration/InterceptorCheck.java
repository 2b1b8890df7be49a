import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import io.eosaudit.interceptor.EosAuditInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The interceptor by itself, no broker (t_58): each check prints one line
 * "what TAB want TAB got", which the test hands to assert_eq.  Uses the
 * interceptor's public API only, as a producer does.
 *
 * usage: java -cp JAR:KAFKA_LIB/* InterceptorCheck.java SCRATCH_DIR
 */
public class InterceptorCheck {
    static void check(String what, Object want, Object got) {
        System.out.println(what + "\t" + want + "\t" + got);
    }

    static Map<String, Object> conf(String... kv) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return m;
    }

    static EosAuditInterceptor configured(String... kv) {
        EosAuditInterceptor i = new EosAuditInterceptor();
        i.configure(conf(kv));
        return i;
    }

    static String h(ProducerRecord<?, ?> r, String key) {
        Header x = r.headers().lastHeader(key);
        return x == null ? null : new String(x.value(), StandardCharsets.UTF_8);
    }

    static int count(Headers hs, String key) {
        int n = 0;
        for (Header x : hs.headers(key)) n++;
        return n;
    }

    static String refused(String... kv) {
        try {
            new EosAuditInterceptor().configure(conf(kv));
            return "accepted";
        } catch (ConfigException e) {
            return "refused";
        }
    }

    @SuppressWarnings("unchecked")
    static ProducerRecord<Object, Object> rec(String topic, Object key) {
        return new ProducerRecord<>(topic, key, (Object) "v");
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);

        /* 8 threads, 2 topics, 20000 sends each: every seq once, densely. */
        EosAuditInterceptor ic = configured("eos.producer", "p", "eos.epoch", "7");
        int threads = 8, per = 20000;
        ConcurrentLinkedQueue<ProducerRecord<Object, Object>> out = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int tt = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < per; i++) out.add(ic.onSend(rec((i + tt) % 2 == 0 ? "a" : "b", null)));
            });
            th.start();
            ts.add(th);
        }
        go.countDown();
        for (Thread th : ts) th.join();
        Map<String, boolean[]> seen = new HashMap<>();
        seen.put("a", new boolean[threads * per / 2]);
        seen.put("b", new boolean[threads * per / 2]);
        int bad = 0, twice = 0;
        for (ProducerRecord<Object, Object> r : out) {
            if (!"p".equals(h(r, "eos.producer")) || !"7".equals(h(r, "eos.epoch"))
                || !"topic".equals(h(r, "eos.scope")) || h(r, "eos.msgid") != null) {
                bad++;
                continue;
            }
            int s = Integer.parseInt(h(r, "eos.seq"));
            boolean[] b = seen.get(r.topic());
            if (s >= b.length) bad++;
            else if (b[s]) twice++;
            else b[s] = true;
        }
        int holes = 0;
        for (boolean[] b : seen.values()) for (boolean x : b) if (!x) holes++;
        check("8 threads: records stamped", threads * per, out.size() - bad);
        check("8 threads: seqs handed out twice", 0, twice);
        check("8 threads: seqs never handed out", 0, holes);

        /* The caller's record is not touched; old eos.* headers go, others stay. */
        RecordHeaders in = new RecordHeaders();
        in.add("eos.seq", "999".getBytes(StandardCharsets.US_ASCII));
        in.add("eos.txn", "3".getBytes(StandardCharsets.US_ASCII));
        in.add("trace", "t1".getBytes(StandardCharsets.US_ASCII));
        ProducerRecord<Object, Object> orig = new ProducerRecord<>("c", 2, 1234L, "k", "v", in);
        ProducerRecord<Object, Object> st = configured("eos.producer", "p", "eos.epoch", "7").onSend(orig);
        check("the caller's headers unchanged", 3, orig.headers().toArray().length);
        check("an old eos.seq replaced", "0", h(st, "eos.seq") + (count(st.headers(), "eos.seq") == 1 ? "" : "+"));
        check("an old eos.txn removed", null, h(st, "eos.txn"));
        check("other headers kept", "t1", h(st, "trace"));
        check("partition, timestamp, key, value kept", "2 1234 k v",
              st.partition() + " " + st.timestamp() + " " + st.key() + " " + st.value());

        /* eos.msgid. */
        EosAuditInterceptor k = configured("client.id", "app-1", "eos.epoch", "1", "eos.msgid", "key");
        ProducerRecord<Object, Object> r1 = k.onSend(rec("m", "order-17"));
        check("client.id as the producer name", "app-1", h(r1, "eos.producer"));
        check("msgid from a String key", "order-17", h(r1, "eos.msgid"));
        check("msgid from a byte[] key", "raw",
              h(k.onSend(rec("m", "raw".getBytes(StandardCharsets.UTF_8))), "eos.msgid"));
        check("msgid from a Long key", "42", h(k.onSend(rec("m", 42L)), "eos.msgid"));
        check("no msgid without a key", null, h(k.onSend(rec("m", null)), "eos.msgid"));
        check("no msgid from an empty key", null, h(k.onSend(rec("m", "")), "eos.msgid"));
        check("no msgid from a key of another type", null, h(k.onSend(rec("m", new Object())), "eos.msgid"));
        char[] big = new char[300];
        Arrays.fill(big, 'x');
        String d = h(k.onSend(rec("m", new String(big))), "eos.msgid");
        check("a 300-byte key: sha256 id", "sha256: 71", d.substring(0, 7) + " " + d.length());
        check("records without a msgid still numbered", "7", h(k.onSend(rec("m", null)), "eos.seq"));
        EosAuditInterceptor hd = configured("eos.producer", "p", "eos.epoch", "1", "eos.msgid", "header:id");
        ProducerRecord<Object, Object> withId = rec("m", "key");
        withId.headers().add("id", "id-5".getBytes(StandardCharsets.UTF_8));
        check("msgid from a header", "id-5", h(hd.onSend(withId), "eos.msgid"));

        /* Never fails a send. */
        EosAuditInterceptor unconf = new EosAuditInterceptor();
        ProducerRecord<Object, Object> plain = rec("x", "k");
        check("before configure: the record itself, unstamped", "true null",
              (unconf.onSend(plain) == plain) + " " + h(plain, "eos.seq"));
        ProducerRecord<Object, Object> hostile = new ProducerRecord<>("x", "k", (Object) "v") {
            @Override
            public Headers headers() {
                throw new IllegalStateException("boom");
            }
        };
        check("a record that throws: passed through", true, ic.onSend(hostile) == hostile);
        check("... and used no seq of its topic", "0", h(ic.onSend(rec("x", null)), "eos.seq"));

        /* The test switch. */
        EosAuditInterceptor sk = configured("eos.producer", "p", "eos.epoch", "1", "eos.test.skip.every", "10");
        StringBuilder used = new StringBuilder();
        int skippedUsed = 0;
        long max = -1;
        for (int i = 0; i < 100; i++) {
            long s = Long.parseLong(h(sk.onSend(rec("s", null)), "eos.seq"));
            if ((s + 1) % 10 == 0) skippedUsed++;
            max = Math.max(max, s);
        }
        check("skip.every=10: a skipped seq used", 0, skippedUsed);
        check("skip.every=10: 100 records reach seq", 110, max);

        /* Settings refused. */
        check("no eos.producer, no client.id", "refused", refused("eos.epoch", "1"));
        check("a generated client.id", "refused", refused("client.id", "producer-3"));
        check("client.id producer-x is a name", "accepted", refused("client.id", "producer-x"));
        check("eos.epoch=-1", "refused", refused("eos.producer", "p", "eos.epoch", "-1"));
        check("eos.epoch=2147483648", "refused", refused("eos.producer", "p", "eos.epoch", "2147483648"));
        check("eos.epoch=2147483647", "accepted", refused("eos.producer", "p", "eos.epoch", "2147483647"));
        check("eos.epoch=1e3", "refused", refused("eos.producer", "p", "eos.epoch", "1e3"));
        check("eos.msgid=value", "refused", refused("eos.producer", "p", "eos.msgid", "value"));
        check("eos.msgid=header:", "refused", refused("eos.producer", "p", "eos.msgid", "header:"));
        check("eos.test.skip.every=1", "refused", refused("eos.producer", "p", "eos.test.skip.every", "1"));
        check("a 256-byte eos.producer", "refused", refused("eos.producer", "y".repeat(256)));
        Path ef = dir.resolve("epoch");
        check("eos.epoch and eos.epoch.file", "refused",
              refused("eos.producer", "p", "eos.epoch", "1", "eos.epoch.file", ef.toString()));
        check("an epoch file in no directory", "refused",
              refused("eos.producer", "p", "eos.epoch.file", dir.resolve("no/such/epoch").toString()));
        check("a transactional producer: accepted, with a warning", "accepted",
              refused("eos.producer", "p", "transactional.id", "tx-1"));

        /* Epochs. */
        String e0 = h(configured("eos.producer", "p", "eos.epoch.file", ef.toString()).onSend(rec("e", null)), "eos.epoch");
        String e1 = h(configured("eos.producer", "p", "eos.epoch.file", ef.toString()).onSend(rec("e", null)), "eos.epoch");
        String e2 = h(configured("eos.producer", "p", "eos.epoch.file", ef.toString()).onSend(rec("e", null)), "eos.epoch");
        check("epoch file: 0, 1, 2 over three starts", "0 1 2", e0 + " " + e1 + " " + e2);
        check("epoch file holds the last", "2", new String(Files.readAllBytes(ef), StandardCharsets.US_ASCII).trim());
        Files.write(ef, "junk\n".getBytes(StandardCharsets.US_ASCII));
        check("an epoch file that holds no number", "refused",
              refused("eos.producer", "p", "eos.epoch.file", ef.toString()));
        long now = System.currentTimeMillis() / 1000 - 1735689600L;
        long t1 = Long.parseLong(h(configured("eos.producer", "clock").onSend(rec("e", null)), "eos.epoch"));
        long t2 = Long.parseLong(h(configured("eos.producer", "clock").onSend(rec("e", null)), "eos.epoch"));
        check("start-time epoch: seconds since 2025", true, t1 >= now && t1 <= now + 5);
        check("a second start in the same second: a larger epoch", true, t2 > t1);
        String host = java.net.InetAddress.getLocalHost().getHostName();
        check("{host} in eos.producer", "w-" + host,
              h(configured("eos.producer", "w-{host}", "eos.epoch", "1").onSend(rec("e", null)), "eos.producer"));
    }
}
