package dev.latchkey.azure;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpMethod;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * A policy in a client's HTTP pipeline, after the SDK's retry policy so that it sees every try:
 * it records when each request was sent and what the server answered, and disturbs the next tries
 * of one operation when told to — the request forwarded to the real server and its reply then lost
 * or held back, or the request never sent. Nothing is faked: whatever is forwarded is served by the
 * real server, so a lost reply is a write that landed while its client saw a failure.
 */
final class RequestTap implements HttpPipelinePolicy {
    private static final HttpHeaderName LEASE_ACTION = HttpHeaderName.fromString("x-ms-lease-action");

    /** As the {@code op} of a rule: the next tries of whatever operation. */
    static final String ANY = "*";

    /** What happens to a disturbed try. */
    enum Fault {
        /** Forwarded; the reply is dropped and the client sees an I/O error (the SDK retries). */
        LOSE_REPLY,
        /** Never forwarded; the client sees an I/O error. */
        DROP_REQUEST,
        /** Forwarded; the reply is held back for the rule's delay (the client times out first). */
        DELAY_REPLY
    }

    /** One try: the operation ({@link #op}), when it was sent ({@link System#nanoTime()}), the status (-1: none). */
    record Try(String op, long sentNanos, int status) {}

    private record Rule(String op, Fault fault, Duration delay, int[] left) {}

    private final List<Try> tries = new ArrayList<>();
    private final List<Rule> rules = new ArrayList<>();

    /** Disturbs the next {@code count} tries of {@code op} ({@link #ANY}: of any operation) with {@code fault}. */
    synchronized RequestTap next(int count, String op, Fault fault) {
        return next(count, op, fault, Duration.ZERO);
    }

    /** Disturbs the next {@code count} tries of {@code op} with {@code fault}, holding replies back for {@code delay}. */
    synchronized RequestTap next(int count, String op, Fault fault, Duration delay) {
        rules.add(new Rule(op, fault, delay, new int[] {count}));
        return this;
    }

    /** Stops disturbing anything. */
    synchronized void clear() {
        rules.clear();
    }

    /** Every try of {@code op} so far, in the order they were answered. */
    synchronized List<Try> tries(String op) {
        return tries.stream().filter(t -> t.op().equals(op)).toList();
    }

    /** The operations ({@link #op}) of every try after the first {@code from}, in the order they were answered. */
    synchronized List<String> opsSince(int from) {
        return tries.subList(from, tries.size()).stream().map(Try::op).toList();
    }

    /** How many tries were answered so far. */
    synchronized int count() {
        return tries.size();
    }

    /**
     * The send time of the latest try of one of {@code ops} that the server answered with 2xx, that
     * is, that surely landed; throws if there is none.
     */
    synchronized long lastLanded(String... ops) {
        List<String> wanted = List.of(ops);
        return tries.stream().filter(t -> wanted.contains(t.op()) && t.status() / 100 == 2)
                .mapToLong(Try::sentNanos).reduce((a, b) -> b - a > 0 ? b : a)
                .orElseThrow(() -> new AssertionError("no try of " + wanted + " landed: " + tries));
    }

    /**
     * The operation of a request: the lease action ({@code acquire}, {@code renew}, {@code release},
     * {@code break}), {@code metadata} for Set Blob Metadata, {@code put} for Put Blob, else the
     * method in lower case ({@code get}, {@code head}, {@code delete}).
     */
    static String op(HttpRequest request) {
        String action = request.getHeaders().getValue(LEASE_ACTION);
        if (action != null) return action;
        String query = request.getUrl().getQuery();
        if (query != null && query.contains("comp=metadata")) return "metadata";
        if (request.getHttpMethod() == HttpMethod.PUT && (query == null || !query.contains("comp="))) return "put";
        return request.getHttpMethod().name().toLowerCase(java.util.Locale.ROOT);
    }

    private synchronized Rule take(String op) {
        for (Rule r : rules) {
            if ((r.op().equals(op) || r.op().equals(ANY)) && r.left()[0] > 0) {
                r.left()[0]--;
                return r;
            }
        }
        return null;
    }

    private synchronized void record(String op, long sent, int status) {
        tries.add(new Try(op, sent, status));
    }

    @Override
    public HttpResponse processSync(HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
        String op = op(context.getHttpRequest());
        Rule rule = take(op);
        long sent = System.nanoTime();
        if (rule != null && rule.fault() == Fault.DROP_REQUEST) {
            record(op, sent, -1);
            throw new UncheckedIOException(new IOException("test: " + op + " request dropped before it was sent"));
        }
        HttpResponse response = next.processSync();
        record(op, sent, response.getStatusCode());
        if (rule == null) return response;
        if (rule.fault() == Fault.LOSE_REPLY) {
            response.close();
            throw new UncheckedIOException(new IOException("test: reply to " + op + " lost"));
        }
        try {
            Thread.sleep(rule.delay().toMillis());
        } catch (InterruptedException e) {
            // the caller gave up on this call (its timeout): the reply never reaches it
            Thread.currentThread().interrupt();
            response.close();
            throw new UncheckedIOException(new InterruptedIOException("test: reply to " + op + " held back"));
        }
        return response;
    }

    @Override
    public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
        return Mono.defer(() -> {
            String op = op(context.getHttpRequest());
            Rule rule = take(op);
            long sent = System.nanoTime();
            if (rule != null && rule.fault() == Fault.DROP_REQUEST) {
                record(op, sent, -1);
                return Mono.error(new IOException("test: " + op + " request dropped before it was sent"));
            }
            return next.process().flatMap(response -> {
                record(op, sent, response.getStatusCode());
                if (rule == null) return Mono.just(response);
                if (rule.fault() == Fault.LOSE_REPLY) {
                    response.close();
                    return Mono.error(new IOException("test: reply to " + op + " lost"));
                }
                return Mono.just(response).delayElement(rule.delay());
            });
        });
    }
}
