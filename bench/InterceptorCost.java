import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import io.eosaudit.interceptor.EosAuditInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/**
 * bench/interceptor.sh's second figure: onSend alone, no client and no
 * broker: CPU nanoseconds per record on one thread (its CPU time, not
 * the wall clock, which a loaded machine stretches), and the bytes of header
 * keys and values that a record carries after it (without the varints
 * of the record format).
 *
 * usage: java -cp JAR:KAFKA_LIB/* InterceptorCost.java RECORDS
 */
public class InterceptorCost {
    public static void main(String[] args) {
        long n = Long.parseLong(args[0]);
        Map<String, Object> conf = new HashMap<>();
        conf.put("eos.producer", "perf-producer-client");
        EosAuditInterceptor ic = new EosAuditInterceptor();
        ic.configure(conf);
        byte[] value = new byte[100];
        long sink = 0;
        ProducerRecord<Object, Object> r = new ProducerRecord<>("bench", value);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (long i = 0; i < n / 4; i++) sink += ic.onSend(r).headers().lastHeader("eos.seq").value().length;
        long t0 = mx.getCurrentThreadCpuTime();
        for (long i = 0; i < n; i++) sink += ic.onSend(r).headers().lastHeader("eos.seq").value().length;
        long t1 = mx.getCurrentThreadCpuTime();
        int bytes = 0;
        for (Header h : ic.onSend(r).headers()) bytes += h.key().length() + h.value().length;
        System.out.printf("%.1f %d %d%n", (double) (t1 - t0) / n, bytes, sink % 2);
    }
}
