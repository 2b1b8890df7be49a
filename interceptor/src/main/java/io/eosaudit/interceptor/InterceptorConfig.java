package io.eosaudit.interceptor;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigException;

/**
 * The interceptor's settings, read from the producer's configuration.
 * A setting that is wrong ends the producer's construction with a
 * ConfigException naming it: a mistake shows when the producer starts,
 * not as records that silently go unaudited.
 */
final class InterceptorConfig {
    static final String PRODUCER = "eos.producer";
    static final String EPOCH = "eos.epoch";
    static final String EPOCH_FILE = "eos.epoch.file";
    static final String MSGID = "eos.msgid";
    static final String TEST_SKIP_EVERY = "eos.test.skip.every";

    static final long EPOCH_MAX = 2147483647L;
    /* Start-time epochs count seconds from 2025-01-01T00:00:00Z: below
     * 2^31 until 2093. */
    static final long EPOCH_BASE_SECONDS = 1735689600L;
    /* The client's own client.id when none is set: "producer-1", "producer-2"
     * in every JVM, so two processes would share a name. */
    private static final Pattern GENERATED_CLIENT_ID = Pattern.compile("producer-[0-9]+");
    /* Start-time epochs handed out in this JVM, by producer name: two
     * producers created within one second get different epochs. */
    private static final ConcurrentHashMap<String, Long> lastTimeEpoch = new ConcurrentHashMap<>();

    final String producer;
    final long epoch;
    final String epochSource;
    final MsgIdSource msgid;
    final long skipEvery;
    final String transactionalId;

    private InterceptorConfig(String producer, long epoch, String epochSource, MsgIdSource msgid,
                              long skipEvery, String transactionalId) {
        this.producer = producer;
        this.epoch = epoch;
        this.epochSource = epochSource;
        this.msgid = msgid;
        this.skipEvery = skipEvery;
        this.transactionalId = transactionalId;
    }

    static InterceptorConfig parse(Map<String, ?> configs) {
        String producer = producerName(configs);
        String epochStr = get(configs, EPOCH);
        String epochFile = get(configs, EPOCH_FILE);
        long epoch;
        String source;
        if (epochStr != null && epochFile != null) {
            throw new ConfigException(EPOCH + " and " + EPOCH_FILE + " are both set: keep one");
        } else if (epochStr != null) {
            epoch = parseLong(EPOCH, epochStr, 0, EPOCH_MAX);
            source = "from " + EPOCH;
        } else if (epochFile != null) {
            epoch = epochFromFile(Paths.get(epochFile));
            source = "counter in " + epochFile;
        } else {
            epoch = epochFromClock(producer, System.currentTimeMillis());
            source = "from the start time";
        }
        MsgIdSource msgid = MsgIdSource.parse(get(configs, MSGID));
        String skip = get(configs, TEST_SKIP_EVERY);
        long skipEvery = skip == null ? 0 : parseLong(TEST_SKIP_EVERY, skip, 2, Long.MAX_VALUE);
        return new InterceptorConfig(producer, epoch, source, msgid, skipEvery,
                                     get(configs, "transactional.id"));
    }

    private static String get(Map<String, ?> configs, String key) {
        Object v = configs.get(key);
        if (v == null) return null;
        String s = v.toString().trim();
        return s.isEmpty() ? null : s;
    }

    private static String producerName(Map<String, ?> configs) {
        String name = get(configs, PRODUCER);
        String from = PRODUCER;
        if (name == null) {
            name = get(configs, "client.id");
            from = "client.id";
            if (name == null || GENERATED_CLIENT_ID.matcher(name).matches()) {
                throw new ConfigException("eosaudit-interceptor: set " + PRODUCER
                        + " (or client.id): the producer needs a name of its own that survives "
                        + "restarts, and the client's generated client.id ("
                        + (name == null ? "none" : name) + ") is the same in every process");
            }
        }
        if (name.contains("{host}")) name = name.replace("{host}", hostName());
        int len = name.getBytes(StandardCharsets.UTF_8).length;
        if (len > 255 || name.indexOf('\0') >= 0) {
            throw new ConfigException(from, name, "eos.producer must be 1 to 255 bytes, no NUL");
        }
        return name;
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            throw new ConfigException("eosaudit-interceptor: {host} in " + PRODUCER
                                      + ": cannot read the host name: " + e.getMessage());
        }
    }

    static long parseLong(String key, String s, long min, long max) {
        long v;
        try {
            if (!s.chars().allMatch(ch -> ch >= '0' && ch <= '9')) throw new NumberFormatException();
            v = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new ConfigException(key, s, "not a decimal number");
        }
        if (v < min || v > max) {
            throw new ConfigException(key, s, "out of range " + min + ".." + max);
        }
        return v;
    }

    /* Seconds since 2025-01-01, and above the last one this JVM handed
     * NAME: restarts of a process are seconds apart, so each gets a larger
     * epoch with no storage at all. */
    static long epochFromClock(String name, long nowMillis) {
        long t = nowMillis / 1000 - EPOCH_BASE_SECONDS;
        if (t < 0 || t > EPOCH_MAX) {
            throw new ConfigException("eosaudit-interceptor: the clock (" + nowMillis
                    + " ms) gives no epoch in 0.." + EPOCH_MAX + "; set " + EPOCH_FILE);
        }
        long e = lastTimeEpoch.merge(name, t, (old, now) -> Math.max(old + 1, now));
        if (e > EPOCH_MAX) throw new ConfigException("eosaudit-interceptor: epoch past " + EPOCH_MAX);
        return e;
    }

    /* The counter in PATH plus one, written back before the producer
     * sends anything (a new file starts at 0).  Under a lock of PATH.lock,
     * so that producers starting together on one host take one number each;
     * the new value goes to a temporary file renamed over PATH, so a crash
     * leaves the old number or the new one, never a torn one. */
    static long epochFromFile(Path path) {
        Path lock = Paths.get(path + ".lock");
        Path tmp = Paths.get(path + ".tmp");
        try (FileChannel lc = FileChannel.open(lock, StandardOpenOption.CREATE,
                                               StandardOpenOption.WRITE)) {
            /* Released when lc closes. */
            lc.lock();
            long next = 0;
            if (Files.exists(path)) {
                String s = new String(Files.readAllBytes(path), StandardCharsets.US_ASCII).trim();
                next = parseLong(EPOCH_FILE + " " + path, s, 0, EPOCH_MAX - 1) + 1;
            }
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE,
                                                    StandardOpenOption.WRITE,
                                                    StandardOpenOption.TRUNCATE_EXISTING)) {
                out.write(ByteBuffer.wrap((next + "\n").getBytes(StandardCharsets.US_ASCII)));
                out.force(true);
            }
            Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE,
                       StandardCopyOption.REPLACE_EXISTING);
            return next;
        } catch (IOException e) {
            throw new ConfigException("eosaudit-interceptor: " + EPOCH_FILE + " " + path + ": "
                                      + e);
        }
    }
}
