package io.eosaudit.interceptor;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Header;

/**
 * Where eos.msgid comes from (eos.msgid = none | key | header:NAME).
 *
 * The id must be the same in every copy of a message, so it comes from
 * the message itself: its key (byte[], ByteBuffer, String, a number or a
 * UUID: the types whose bytes or text are stable) or one of its headers.
 * A record without one (no key, an empty one, a key of another type) gets
 * no eos.msgid and is still stamped.  An id longer than the contract's
 * 255 bytes is replaced by "sha256:" and its digest in hex (71 bytes).
 */
final class MsgIdSource {
    private static final int MSGID_MAX = 255;

    private final String header; /* null: the key */
    private final boolean none;

    private MsgIdSource(boolean none, String header) {
        this.none = none;
        this.header = header;
    }

    static MsgIdSource parse(String v) {
        if (v == null || v.equals("none")) return new MsgIdSource(true, null);
        if (v.equals("key")) return new MsgIdSource(false, null);
        if (v.startsWith("header:") && v.length() > "header:".length()) {
            return new MsgIdSource(false, v.substring("header:".length()));
        }
        throw new ConfigException(InterceptorConfig.MSGID, v, "want none, key or header:NAME");
    }

    String describe() {
        return none ? "none" : header == null ? "the key" : "header " + header;
    }

    /** The record's eos.msgid value, or null for none. */
    byte[] extract(ProducerRecord<?, ?> record) {
        if (none) return null;
        byte[] id;
        if (header == null) {
            id = keyBytes(record.key());
        } else {
            Header h = record.headers().lastHeader(header);
            id = h == null ? null : h.value();
        }
        if (id == null || id.length == 0) return null;
        return id.length <= MSGID_MAX ? id : digest(id);
    }

    private static byte[] keyBytes(Object key) {
        if (key instanceof byte[]) return (byte[]) key;
        if (key instanceof ByteBuffer) {
            ByteBuffer b = ((ByteBuffer) key).duplicate();
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        }
        if (key instanceof String || key instanceof Number || key instanceof java.util.UUID) {
            return key.toString().getBytes(StandardCharsets.UTF_8);
        }
        return null;
    }

    private static byte[] digest(byte[] id) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(id);
            StringBuilder sb = new StringBuilder("sha256:");
            for (byte b : d) sb.append(String.format("%02x", b & 0xff));
            return sb.toString().getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256", e);
        }
    }
}
