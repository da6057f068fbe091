package dev.latchkey.gcs;

import com.google.api.client.http.HttpRequestInitializer;
import com.google.api.client.http.HttpResponseInterceptor;
import com.google.cloud.ServiceOptions;
import com.google.cloud.http.HttpTransportOptions;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * The client's HTTP transport settings plus one thing the Storage API does not expose: the
 * {@code Date} header of the last response received on the calling thread — the server's clock,
 * which makes a record's age ({@code Date − updated}) independent of every client's wall clock.
 *
 * <p>Safe because the client runs each request synchronously on the caller's thread, so a
 * thread-local holds exactly the response of the call just made; {@link #clear()} before a call
 * rules out a stale value. {@code Date} has whole seconds, truncated, so an age computed from it
 * is at most one second <em>short</em>: staleness is then seen late, never early.
 */
final class ServerDateTransportOptions extends HttpTransportOptions {
    private static final long serialVersionUID = 1L;

    /** Static: nothing here is per client, and options objects may be serialized and copied. */
    private static final ThreadLocal<Instant> LAST_DATE = new ThreadLocal<>();

    /**
     * @param base the transport to keep (its HTTP transport factory: proxy, TLS), with our timeouts
     */
    ServerDateTransportOptions(HttpTransportOptions base, int connectTimeoutMillis, int readTimeoutMillis) {
        super(HttpTransportOptions.newBuilder().setHttpTransportFactory(base.getHttpTransportFactory())
                .setConnectTimeout(connectTimeoutMillis).setReadTimeout(readTimeoutMillis));
    }

    @Override
    public HttpRequestInitializer getHttpRequestInitializer(ServiceOptions<?, ?> serviceOptions) {
        HttpRequestInitializer base = super.getHttpRequestInitializer(serviceOptions);
        return request -> {
            base.initialize(request);
            HttpResponseInterceptor earlier = request.getResponseInterceptor();
            request.setResponseInterceptor(response -> {
                if (earlier != null) earlier.interceptResponse(response);
                LAST_DATE.set(parse(response.getHeaders().getDate()));
            });
        };
    }

    void clear() {
        LAST_DATE.remove();
    }

    /** The {@code Date} of the last response on this thread since {@link #clear()}, or null. */
    Instant lastServerDate() {
        return LAST_DATE.get();
    }

    private static Instant parse(String date) {
        if (date == null) return null;
        try {
            return ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            return null; // an unreadable Date only costs us the server-clock age
        }
    }
}
