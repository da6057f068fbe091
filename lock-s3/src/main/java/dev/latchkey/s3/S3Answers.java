package dev.latchkey.s3;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * What an S3 answer to a conditional write says about whether the write was applied — the one
 * classification that both the store's mapping ({@link S3ConditionalStore}) and the SDK's retry of
 * writes ({@link S3Clients}) rest on.
 *
 * <ul>
 *   <li><b>Condition failed</b> (412; 404 on {@code If-Match}, unless the bucket is missing): not
 *       applied, and it never will be — its condition names a version that is gone, and versions
 *       are never reused.</li>
 *   <li><b>Refused</b> (409 {@code ConditionalRequestConflict}/{@code OperationAborted}: another
 *       conditional write to the key is in flight; 503 {@code SlowDown} and 429: throttling): the
 *       server turned the request away without applying it.</li>
 *   <li><b>Never sent</b> (connection refused, unknown host, no route): no byte of the request
 *       reached a server.</li>
 * </ul>
 * Everything else — other 5xx, timeouts, a connection lost mid-exchange — leaves the outcome
 * unknown: the write may have landed, or may still land.
 */
final class S3Answers {
    private S3Answers() {}

    /** The condition was false: this write can never land. */
    static boolean conditionFailed(S3Exception e) {
        int s = e.statusCode();
        return s == 412 || (s == 404 && !isNoSuchBucket(e));
    }

    /** The server refused the request without applying it: a conflict in flight, or throttling. */
    static boolean refused(S3Exception e) {
        return e.statusCode() == 409 || isThrottling(e);
    }

    /** 503 {@code SlowDown} (AWS S3, Ceph) or 429: "reduce your request rate", nothing applied. */
    static boolean isThrottling(S3Exception e) {
        return e.statusCode() == 429 || (e.statusCode() == 503 && "SlowDown".equals(errorCode(e)));
    }

    /** The request cannot have reached any server: the connection was never made. */
    static boolean neverSent(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ConnectException || c instanceof UnknownHostException || c instanceof NoRouteToHostException) {
                return true;
            }
        }
        return false;
    }

    static boolean isNoSuchBucket(S3Exception e) {
        return "NoSuchBucket".equals(errorCode(e));
    }

    /** The S3 error code ({@code SlowDown}, {@code NoSuchBucket}, …), or null. */
    static String errorCode(S3Exception e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }
}
