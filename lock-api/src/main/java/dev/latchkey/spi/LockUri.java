package dev.latchkey.spi;

import dev.latchkey.Durations;
import dev.latchkey.UnsupportedLockUriException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * A parsed lock URI: {@code scheme://[user[:password]@]host[:port][/path][?name=value&…]}.
 *
 * <p>{@link #toString()} masks the password and every parameter whose name looks secret
 * ({@code password}, {@code secret…}, {@code …key}, {@code sas}, {@code sig}, {@code token},
 * {@code connectionString}, {@code credentials}), so a URI can be logged or put in an exception.
 * User info and parameter values are percent-decoded.
 */
public final class LockUri {
    private static final String MASK = "****";

    private final String scheme;
    private final String user;
    private final String password;
    private final String host;
    private final int port;
    private final String path;
    private final Map<String, String> params;

    private LockUri(String scheme, String user, String password, String host, int port, String path,
                    Map<String, String> params) {
        this.scheme = scheme;
        this.user = user;
        this.password = password;
        this.host = host;
        this.port = port;
        this.path = path;
        this.params = Collections.unmodifiableMap(params);
    }

    /**
     * @throws UnsupportedLockUriException if the text is not of the form above; the message shows
     *                                     the URI masked
     */
    public static LockUri parse(String text) {
        if (text == null || text.isBlank()) {
            throw new UnsupportedLockUriException("empty lock URI (expected e.g. file:///var/lock/latchkey or postgres://host/db)");
        }
        String s = text.trim();
        int colon = s.indexOf(':');
        if (colon <= 0 || !s.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
            throw new UnsupportedLockUriException("not a lock URI (no scheme): " + roughMask(s));
        }
        String scheme = s.substring(0, colon).toLowerCase(Locale.ROOT);
        String rest = s.substring(colon + 1);
        if (!rest.startsWith("//")) {
            throw new UnsupportedLockUriException("lock URI must look like " + scheme + "://…: " + roughMask(s));
        }
        rest = rest.substring(2);
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String authority = slash >= 0 ? rest.substring(0, slash) : rest;
        String path = slash >= 0 ? rest.substring(slash) : "";
        String user = null;
        String password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String info = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int c = info.indexOf(':');
            user = decode(c >= 0 ? info.substring(0, c) : info, s);
            password = c >= 0 ? decode(info.substring(c + 1), s) : null;
        }
        String host = authority;
        int port = -1;
        int portColon = authority.startsWith("[") ? authority.indexOf(':', authority.indexOf(']')) : authority.lastIndexOf(':');
        if (portColon >= 0) {
            host = authority.substring(0, portColon);
            String p = authority.substring(portColon + 1);
            try {
                port = Integer.parseInt(p);
                if (port < 1 || port > 65535) throw new NumberFormatException();
            } catch (NumberFormatException e) {
                throw new UnsupportedLockUriException("bad port '" + p + "' in " + roughMask(s));
            }
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                String name = decode(eq >= 0 ? pair.substring(0, eq) : pair, s);
                String value = eq >= 0 ? decode(pair.substring(eq + 1), s) : "";
                if (params.put(name, value) != null) {
                    throw new UnsupportedLockUriException("parameter '" + name + "' given twice in " + roughMask(s));
                }
            }
        }
        return new LockUri(scheme, user, password, host, port, decodePath(path, s), params);
    }

    private static String decode(String part, String whole) {
        try {
            return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new UnsupportedLockUriException("bad percent-encoding in " + roughMask(whole));
        }
    }

    private static String decodePath(String path, String whole) {
        return decode(path, whole);
    }

    /** Masks user info of a URI we could not parse, so even error messages never leak it. */
    private static String roughMask(String s) {
        return s.replaceAll("//[^/@?]*@", "//" + MASK + "@").replaceAll("(?i)([?&][^=&]*(?:pass|secret|key|sas|sig|token|cred)[^=&]*=)[^&]*", "$1" + MASK);
    }

    public String scheme() {
        return scheme;
    }

    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /** The password from the user info. Never print it. */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** The host (or, for {@code mem://NAME}, the name); empty string when absent. */
    public String host() {
        return host;
    }

    public OptionalInt port() {
        return port < 0 ? OptionalInt.empty() : OptionalInt.of(port);
    }

    /** The decoded path, starting with {@code /}, or empty. */
    public String path() {
        return path;
    }

    public Map<String, String> params() {
        return params;
    }

    public Optional<String> param(String name) {
        return Optional.ofNullable(params.get(name));
    }

    public String param(String name, String defaultValue) {
        return params.getOrDefault(name, defaultValue);
    }

    public Duration durationParam(String name, Duration defaultValue) {
        String v = params.get(name);
        if (v == null) return defaultValue;
        try {
            return Durations.parse(v);
        } catch (IllegalArgumentException e) {
            throw new UnsupportedLockUriException("parameter " + name + ": " + e.getMessage() + " in " + this);
        }
    }

    public int intParam(String name, int defaultValue) {
        String v = params.get(name);
        if (v == null) return defaultValue;
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new UnsupportedLockUriException("parameter " + name + " must be a whole number, was '" + v + "' in " + this);
        }
    }

    public boolean booleanParam(String name, boolean defaultValue) {
        String v = params.get(name);
        if (v == null) return defaultValue;
        switch (v.toLowerCase(Locale.ROOT)) {
            case "true": case "1": case "yes": case "": return true;
            case "false": case "0": case "no": return false;
            default: throw new UnsupportedLockUriException("parameter " + name + " must be true or false, was '" + v + "' in " + this);
        }
    }

    /**
     * Fails, naming the offenders and the accepted names, if the URI has a parameter outside
     * {@code allowed}: a misspelt {@code ttl=} must not be silently ignored.
     */
    public LockUri requireOnly(Set<String> allowed) {
        Set<String> unknown = new TreeSet<>(params.keySet());
        unknown.removeAll(allowed);
        if (!unknown.isEmpty()) {
            throw new UnsupportedLockUriException("unknown parameter(s) " + unknown + " for " + scheme
                    + "://; accepted: " + new TreeSet<>(allowed));
        }
        return this;
    }

    /** True for parameter names whose values are masked. */
    public static boolean isSecretName(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
        return n.contains("password") || n.contains("secret") || n.endsWith("key") || n.equals("sas")
                || n.equals("sig") || n.contains("token") || n.contains("connectionstring") || n.contains("credential");
    }

    /** The URI with secrets replaced by {@code ****}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(scheme).append("://");
        if (user != null) {
            sb.append(enc(user));
            if (password != null) sb.append(':').append(MASK);
            sb.append('@');
        }
        sb.append(host);
        if (port >= 0) sb.append(':').append(port);
        sb.append(path);
        if (!params.isEmpty()) {
            sb.append('?');
            boolean first = true;
            for (Map.Entry<String, String> e : params.entrySet()) {
                if (!first) sb.append('&');
                first = false;
                sb.append(enc(e.getKey())).append('=').append(isSecretName(e.getKey()) ? MASK : enc(e.getValue()));
            }
        }
        return sb.toString();
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
