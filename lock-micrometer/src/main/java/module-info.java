/** Micrometer metrics of a Latchkey {@code LockManager}: {@code LatchkeyMetrics}. */
module dev.latchkey.micrometer {
    requires transitive dev.latchkey.api;
    requires transitive micrometer.core;

    exports dev.latchkey.micrometer;
}
