/**
 * The {@code s3://} backend: {@code S3Locks} for an application's own {@code S3Client}; the URI route
 * through {@code Latchkey.open("s3://…")}. Everything else stays inside the package.
 */
module dev.latchkey.s3 {
    requires transitive dev.latchkey.api;
    requires transitive software.amazon.awssdk.services.s3;
    requires software.amazon.awssdk.awscore;
    requires software.amazon.awssdk.core;
    requires software.amazon.awssdk.auth;
    requires software.amazon.awssdk.http;
    requires software.amazon.awssdk.http.urlconnection;
    requires software.amazon.awssdk.regions;
    requires software.amazon.awssdk.retries;
    requires software.amazon.awssdk.retries.api;

    exports dev.latchkey.s3;

    provides dev.latchkey.spi.LockProvider with dev.latchkey.s3.S3LockProvider;
}
