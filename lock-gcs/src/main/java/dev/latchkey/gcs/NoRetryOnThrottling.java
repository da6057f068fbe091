package dev.latchkey.gcs;

import com.google.api.gax.retrying.ResultRetryAlgorithm;
import com.google.cloud.BaseServiceException;
import com.google.cloud.ExceptionHandler;
import com.google.cloud.storage.StorageRetryStrategy;

/**
 * The Java client's default retry strategy, except that a {@code 429 Too Many Requests} is never
 * retried — for the client that sends the store's writes.
 *
 * <p>Why: the client's default retries 429 for every idempotent call, and a write with
 * {@code ifGenerationMatch} counts as idempotent. But GCS answers 429 to a write of an object written
 * less than about a second ago, without applying it; the client's retry, 100 ms later, falls into the
 * same second and is refused again, so it only adds a request to an object that is already over its
 * limit and delays the answer. The lease engine's response to "not written" is the right one:
 * read the record and decide. Everything else (408, 5xx, connection failures) is retried as before.
 */
final class NoRetryOnThrottling implements StorageRetryStrategy {
    private static final long serialVersionUID = 1L;
    static final NoRetryOnThrottling INSTANCE = new NoRetryOnThrottling();

    private static final ExceptionHandler IDEMPOTENT = ExceptionHandler.newBuilder()
            .addInterceptors(new NotOn429()).build();

    private NoRetryOnThrottling() {}

    @Override
    public ResultRetryAlgorithm<?> getIdempotentHandler() {
        return IDEMPOTENT;
    }

    @Override
    public ResultRetryAlgorithm<?> getNonidempotentHandler() {
        return StorageRetryStrategy.getDefaultStorageRetryStrategy().getNonidempotentHandler();
    }

    /** Refuses to retry a 429; asks the default's idempotent handler about everything else. */
    private static final class NotOn429 implements ExceptionHandler.Interceptor {
        private static final long serialVersionUID = 1L;

        @Override
        public RetryResult beforeEval(Exception e) {
            if (e instanceof BaseServiceException b && b.getCode() == 429) return RetryResult.NO_RETRY;
            @SuppressWarnings("unchecked")
            ResultRetryAlgorithm<Object> def = (ResultRetryAlgorithm<Object>)
                    StorageRetryStrategy.getDefaultStorageRetryStrategy().getIdempotentHandler();
            return def.shouldRetry(e, null) ? RetryResult.RETRY : RetryResult.NO_RETRY;
        }

        @Override
        public RetryResult afterEval(Exception e, RetryResult retryResult) {
            return RetryResult.CONTINUE_EVALUATION;
        }
    }

    private Object readResolve() {
        return INSTANCE;
    }
}
