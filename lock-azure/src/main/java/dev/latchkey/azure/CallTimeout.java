package dev.latchkey.azure;

import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * The bound a manager passes to each SDK call: {@code timeout}, except until the client it built has
 * had its first answer from the service, when it is at least {@link #FIRST_ANSWER}. The first call of
 * a fresh JVM also starts the SDK (its classes, its HTTP client's event loops, its XML mapper): with
 * 4 to 6 {@code latchkey run}s started at once on a loaded 2-core machine that took more than 5 s,
 * and every run failed with a {@code TimeoutException} (exit 69) while Azurite answered
 * {@code curl} in milliseconds. The network stays bounded all the same: the HTTP client's connect
 * timeout (2 s) and its response and read timeouts ({@code timeout}, per try) end a try that waits on
 * the service, so an unreachable account still fails in seconds. A renewal never needs the longer
 * bound: a lease exists only after an answer.
 *
 * <p>A manager on the application's own client ({@link AzureLocks}) uses {@link #fixed}: the
 * application owns that client's pipeline, which this class cannot watch.
 */
final class CallTimeout implements HttpPipelinePolicy {
    static final Duration FIRST_ANSWER = Duration.ofSeconds(30);

    private final Duration timeout;
    private volatile boolean answered;

    private CallTimeout(Duration timeout, boolean answered) {
        this.timeout = timeout;
        this.answered = answered;
    }

    /** Watches the client's pipeline (add it as a policy) for its first answer. */
    static CallTimeout untilFirstAnswer(Duration timeout) {
        return new CallTimeout(timeout, false);
    }

    /** Always {@code timeout}. */
    static CallTimeout fixed(Duration timeout) {
        return new CallTimeout(timeout, true);
    }

    /** The bound of the next call. */
    Duration next() {
        return answered || timeout.compareTo(FIRST_ANSWER) >= 0 ? timeout : FIRST_ANSWER;
    }

    /** The URI's {@code timeout}, what every call gets once the service has answered. */
    Duration timeout() {
        return timeout;
    }

    @Override
    public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
        return next.process().doOnNext(response -> answered = true);
    }

    @Override
    public HttpResponse processSync(HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
        HttpResponse response = next.processSync();
        answered = true;
        return response;
    }
}
