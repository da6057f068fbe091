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
 * <p><b>Guarantee.</b> No part of the user info ever appears in {@link #toString()} or in a parse
 * error's message: both show it as {@code ****}, and mask every parameter whose name looks secret
 * ({@code password}, {@code secret…}, {@code …key}, {@code sas}, {@code sig}, {@code token},
 * {@code connectionString}, {@code credentials}), so a URI can be logged or put in an exception.
 *
 * <p>The user info is everything between {@code //} and the <em>last</em> {@code @} (when anything
 * stands between {@code //} and a {@code /}): a password may hold unencoded {@code /}, {@code ?},
 * {@code #} or {@code @}, and must never be taken for a host, port, path or parameter. So an
 * {@code @} in the path or query must be written {@code %40}. User info and parameter values are
 * percent-decoded.
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
     * The URI {@code base} (scheme, authority and path, no query) with {@code params} as its query,
     * each value URL-encoded: how a backend's typed options (its factory on the application's own
     * client) reach the same settings parsing as a URI.
     *
     * @throws UnsupportedLockUriException as {@link #parse(String)}
     */
    public static LockUri parse(String base, Map<String, String> params) {
        StringBuilder text = new StringBuilder(base);
        char separator = '?';
        for (Map.Entry<String, String> e : params.entrySet()) {
            text.append(separator).append(e.getKey()).append('=').append(enc(e.getValue()));
            separator = '&';
        }
        return parse(text.toString());
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
            // not the scheme by name: without "//", "alice:secret@host" has no scheme but user info
            throw new UnsupportedLockUriException("lock URI must look like scheme://…: " + roughMask(s));
        }
        rest = rest.substring(2);
        String info = null;
        int at = rest.startsWith("/") ? -1 : rest.lastIndexOf('@');
        if (at >= 0) {
            info = rest.substring(0, at);
            rest = rest.substring(at + 1);
        }
        // from here on every message shows the URI with the user info masked
        String shown = maskParams(scheme + "://" + (info != null ? MASK + "@" : "") + rest);
        String user = null;
        String password = null;
        if (info != null) {
            int c = info.indexOf(':');
            try {
                user = decodeOrFail(c >= 0 ? info.substring(0, c) : info);
                password = c >= 0 ? decodeOrFail(info.substring(c + 1)) : null;
            } catch (IllegalArgumentException e) {
                throw new UnsupportedLockUriException("bad percent-encoding in the user info of " + shown);
            }
        }
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String authority = slash >= 0 ? rest.substring(0, slash) : rest;
        String path = slash >= 0 ? rest.substring(slash) : "";
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
                throw new UnsupportedLockUriException("bad port '" + p + "' in " + shown);
            }
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                String name = decode(eq >= 0 ? pair.substring(0, eq) : pair, shown);
                String value = eq >= 0 ? decode(pair.substring(eq + 1), shown) : "";
                if (params.put(name, value) != null) {
                    throw new UnsupportedLockUriException("parameter '" + name + "' given twice in " + shown);
                }
            }
        }
        return new LockUri(scheme, user, password, host, port, decode(path, shown), params);
    }

    private static String decode(String part, String shown) {
        try {
            return decodeOrFail(part);
        } catch (IllegalArgumentException e) {
            throw new UnsupportedLockUriException("bad percent-encoding in " + shown);
        }
    }

    private static String decodeOrFail(String part) {
        return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** For text we could not parse: everything up to the last {@code @} may be user info, so none of it is shown. */
    private static String roughMask(String s) {
        int at = s.lastIndexOf('@');
        return maskParams(at >= 0 ? MASK + s.substring(at) : s);
    }

    private static String maskParams(String s) {
        return s.replaceAll("(?i)([?&][^=&]*(?:pass|secret|key|sas|sig|token|cred)[^=&]*=)[^&]*", "$1" + MASK);
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

    /**
     * The decoded path without its leading and trailing slashes, as an object store's key prefix:
     * {@code /locks/app/} and {@code /locks/app} give {@code locks/app}, {@code /} and none give "".
     */
    public String pathPrefix() {
        int from = 0;
        int to = path.length();
        while (from < to && path.charAt(from) == '/') from++;
        while (to > from && path.charAt(to - 1) == '/') to--;
        return path.substring(from, to);
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
        if (user != null) sb.append(MASK).append('@'); // not even the user: it may be a key id, or half a password
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
