package dev.latchkey.gcs.testserver;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.CRC32C;
import java.util.zip.GZIPInputStream;

/**
 * The wire plumbing of the {@link GcsTestServer}: request bodies (gzip, multipart), paths and
 * queries, GCS's hashes, and answers ({@link Reply}) with a {@code Date} header and GCS's error
 * shape. No state: everything here is a function of its arguments.
 */
final class Http {
    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);

    private Http() {}

    /** An answer not yet sent: {@link GcsTestServer} sends it, or loses it when a test asked for that. */
    record Reply(int code, String contentType, byte[] body) {
        static Reply json(int code, Map<String, Object> json) {
            return new Reply(code, "application/json; charset=UTF-8", Json.write(json).getBytes(StandardCharsets.UTF_8));
        }

        static Reply bytes(int code, String contentType, byte[] body) {
            return new Reply(code, contentType, body);
        }

        static Reply empty(int code) {
            return new Reply(code, null, null);
        }

        /** GCS's error shape: {@code {"error":{"code":…,"message":…,"errors":[{"reason":…}]}}}. */
        static Reply error(int code, String reason, String message) {
            if (code == 304) return empty(304);
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("message", message);
            detail.put("domain", "global");
            detail.put("reason", reason);
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("code", code);
            error.put("message", message);
            error.put("errors", List.of(detail));
            Map<String, Object> root = new LinkedHashMap<>();
            root.put("error", error);
            return json(code, root);
        }

        /** Sends this answer; the JDK's server adds {@code Date} (the true time) itself, over any set here. */
        void send(HttpExchange ex) throws IOException {
            if (contentType != null) ex.getResponseHeaders().set("Content-Type", contentType);
            if (body == null || code == 204 || code == 304) {
                ex.sendResponseHeaders(code, -1);
                return;
            }
            ex.sendResponseHeaders(code, body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    static byte[] readBody(HttpExchange ex) throws IOException {
        // read it all before answering: the JDK server cannot reuse a connection with unread input
        byte[] raw;
        try (InputStream in = ex.getRequestBody()) {
            raw = in.readAllBytes();
        }
        String enc = ex.getRequestHeaders().getFirst("Content-Encoding");
        if (enc != null && enc.trim().equalsIgnoreCase("gzip") && raw.length > 0) {
            try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(raw))) {
                return in.readAllBytes();
            }
        }
        return raw;
    }

    static Map<String, Object> jsonObject(byte[] body) {
        if (body.length == 0) return new LinkedHashMap<>();
        Object v = Json.parse(new String(body, StandardCharsets.UTF_8));
        if (!(v instanceof Map<?, ?>)) throw new IllegalArgumentException("expected a JSON object");
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) v;
        return m;
    }

    record Part(String contentType, byte[] body) {}

    /** Splits a {@code multipart/related} body into its parts (headers, then bytes). */
    static List<Part> multipart(String contentType, byte[] body) throws GcsError {
        String boundary = null;
        if (contentType != null) {
            for (String p : contentType.split(";")) {
                String t = p.trim();
                if (t.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
                    boundary = t.substring(9);
                    if (boundary.startsWith("\"") && boundary.endsWith("\"")) boundary = boundary.substring(1, boundary.length() - 1);
                }
            }
        }
        if (boundary == null) throw new GcsError(400, "invalid", "multipart upload without a boundary");
        byte[] delim = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        List<Part> parts = new ArrayList<>();
        int pos = indexOf(body, delim, 0);
        if (pos < 0) throw new GcsError(400, "invalid", "multipart body without its boundary");
        while (true) {
            int lineEnd = pos + delim.length;
            if (lineEnd + 1 < body.length && body[lineEnd] == '-' && body[lineEnd + 1] == '-') break; // closing
            int headersStart = skipEol(body, lineEnd);
            int headersEnd = indexOf(body, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), headersStart);
            int sepLen = 4;
            if (headersEnd < 0) {
                headersEnd = indexOf(body, "\n\n".getBytes(StandardCharsets.ISO_8859_1), headersStart);
                sepLen = 2;
            }
            if (headersEnd < 0) throw new GcsError(400, "invalid", "malformed multipart part");
            String headers = new String(body, headersStart, headersEnd - headersStart, StandardCharsets.ISO_8859_1);
            int dataStart = headersEnd + sepLen;
            int next = indexOf(body, delim, dataStart);
            if (next < 0) throw new GcsError(400, "invalid", "multipart body not closed");
            int dataEnd = next;
            if (dataEnd > dataStart && body[dataEnd - 1] == '\n') dataEnd--;
            if (dataEnd > dataStart && body[dataEnd - 1] == '\r') dataEnd--;
            String partType = null;
            for (String h : headers.split("\r?\n")) {
                int c = h.indexOf(':');
                if (c > 0 && h.substring(0, c).trim().equalsIgnoreCase("Content-Type")) partType = h.substring(c + 1).trim();
            }
            parts.add(new Part(partType, Arrays.copyOfRange(body, dataStart, dataEnd)));
            pos = next;
        }
        return parts;
    }

    private static int skipEol(byte[] b, int i) {
        if (i < b.length && b[i] == '\r') i++;
        if (i < b.length && b[i] == '\n') i++;
        return i;
    }

    private static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = Math.max(0, from); i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) continue outer;
            }
            return i;
        }
        return -1;
    }

    /** Path segments, each percent-decoded ({@code %2F} inside an object name stays part of it). */
    static List<String> pathSegments(String rawPath) {
        List<String> out = new ArrayList<>();
        for (String s : rawPath.split("/")) {
            if (!s.isEmpty()) out.add(percentDecode(s, false));
        }
        return out;
    }

    static Map<String, String> query(String raw) {
        Map<String, String> m = new HashMap<>();
        if (raw == null || raw.isEmpty()) return m;
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            String k = percentDecode(eq >= 0 ? pair.substring(0, eq) : pair, true);
            String v = eq >= 0 ? percentDecode(pair.substring(eq + 1), true) : "";
            m.put(k, v);
        }
        return m;
    }

    private static String percentDecode(String s, boolean plusIsSpace) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else if (c == '+' && plusIsSpace) {
                out.write(' ');
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String encodeSegment(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                sb.append((char) c);
            } else {
                sb.append('%').append(String.format("%02X", c));
            }
        }
        return sb.toString();
    }

    static long parseLong(String v, String what) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Invalid argument for " + what + ": '" + v + "'");
        }
    }

    static String md5(byte[] data) {
        try {
            return Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String crc32c(byte[] data) {
        CRC32C c = new CRC32C();
        c.update(data);
        return Base64.getEncoder().encodeToString(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
    }
}
