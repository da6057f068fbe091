package dev.latchkey.example.redis;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.StoredRecord;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link ConditionalStore} on one Redis primary: each record is the hash
 * {@code <prefix>:<name>} with fields {@code d} (the data) and {@code v} (the version).
 *
 * <p><b>Guarantee.</b> {@link #create}, {@link #replace} and {@link #delete} are each one Lua script,
 * and Redis runs a script atomically (no other command runs between its read of {@code v} and its
 * write), so of racing writes against one version exactly one lands. A version is 128 random bits
 * chosen by the writing client, so it never matches other data under that name again: not after a
 * delete and re-create, and not after a restart that lost data (a counter kept in Redis would start
 * again from where the surviving data left it, and an old holder's stale version could then match a
 * new lease). An answer of "not written" (empty, {@code false}) always comes from a script that
 * found the condition false and wrote nothing; a timeout, a lost connection or a server error is a
 * {@link LockBackendException} (retriable where trying again can help), for a write meaning its
 * outcome is unknown.
 *
 * <p>What this rests on — acknowledged writes survive a crash — is the server's persistence
 * setting, checked once by {@link RedisLockProvider} (see README.md). Record ages are not reported
 * ({@link StoredRecord#age()} is null): the lease engine judges staleness by watching a version
 * unchanged for a TTL on its own monotonic clock, so no server or client wall clock is trusted.
 * Waiters are woken by the writes' announcements ({@link RedisChangeFeed}), which bear on
 * liveness only.
 */
public final class RedisConditionalStore implements ConditionalStore {
    private static final byte[] DATA = bytes("d");
    private static final byte[] VERSION = bytes("v");
    private static final SecureRandom RANDOM = new SecureRandom();

    // Each script: KEYS[1] the record, ARGV[1] the change channel (RedisChangeFeed), which hears the
    // record's key after every write that landed.
    /** ARGV[2] data, ARGV[3] new version. Returns the version, or false if the record exists. */
    private static final String CREATE = """
            if redis.call('EXISTS', KEYS[1]) == 1 then return false end
            redis.call('HSET', KEYS[1], 'd', ARGV[2], 'v', ARGV[3])
            redis.call('PUBLISH', ARGV[1], KEYS[1])
            return ARGV[3]""";
    /** ARGV[2] expected version, ARGV[3] data, ARGV[4] new version. False unless v matched. */
    private static final String REPLACE = """
            if redis.call('HGET', KEYS[1], 'v') ~= ARGV[2] then return false end
            redis.call('HSET', KEYS[1], 'd', ARGV[3], 'v', ARGV[4])
            redis.call('PUBLISH', ARGV[1], KEYS[1])
            return ARGV[4]""";
    /** ARGV[2] expected version. 1 if deleted, 0 if it changed or is gone. */
    private static final String DELETE = """
            if redis.call('HGET', KEYS[1], 'v') ~= ARGV[2] then return 0 end
            redis.call('DEL', KEYS[1])
            redis.call('PUBLISH', ARGV[1], KEYS[1])
            return 1""";

    private final RedisConnection connection;
    private final RedisChangeFeed changes;
    private final byte[] channel;
    private final String keyPrefix; // "<prefix>:"
    private final String description;

    RedisConditionalStore(RedisConnection connection, RedisChangeFeed changes, RedisSettings settings) {
        this.connection = Objects.requireNonNull(connection, "connection");
        this.changes = Objects.requireNonNull(changes, "changes");
        this.channel = bytes(RedisChangeFeed.channel(settings));
        this.keyPrefix = settings.prefix() + ":";
        this.description = settings.describe();
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        List<KeyValue<byte[], byte[]>> fields = call("HMGET", name, c -> c.hmget(key(name), DATA, VERSION));
        KeyValue<byte[], byte[]> data = fields.get(0);
        KeyValue<byte[], byte[]> version = fields.get(1);
        if (!data.hasValue() && !version.hasValue()) return Optional.empty();
        if (!data.hasValue() || !version.hasValue()) {
            throw new LockBackendException("Redis key " + keyPrefix + name + " on " + description
                    + " is not a lock record (fields d and v): something else writes under this prefix; "
                    + "give the locks their own prefix=…", false);
        }
        return Optional.of(new StoredRecord(data.getValue(), string(version.getValue()), null));
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        byte[] version = newVersion();
        byte[] written = call("create (EVAL)", name, c -> c.eval(CREATE, ScriptOutputType.VALUE, new byte[][] {key(name)},
                channel, data, version));
        return Optional.ofNullable(written).map(RedisConditionalStore::string);
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        Objects.requireNonNull(expectedVersion, "expectedVersion");
        byte[] version = newVersion();
        byte[] written = call("replace (EVAL)", name, c -> c.eval(REPLACE, ScriptOutputType.VALUE,
                new byte[][] {key(name)}, channel, bytes(expectedVersion), data, version));
        return Optional.ofNullable(written).map(RedisConditionalStore::string);
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        Objects.requireNonNull(expectedVersion, "expectedVersion");
        Long deleted = call("delete (EVAL)", name, c -> c.eval(DELETE, ScriptOutputType.INTEGER,
                new byte[][] {key(name)}, channel, bytes(expectedVersion)));
        return deleted != null && deleted == 1L;
    }

    /**
     * By {@code SCAN MATCH <prefix>:<namePrefix>*}: walks the whole database (in steps, never
     * blocking the server), so it costs time in proportion to all keys, not to the matches. Names
     * are {@code [a-z0-9_~-]} and the prefix is checked free of glob characters, so the pattern
     * matches literally.
     */
    @Override
    public List<String> list(String namePrefix) {
        ScanArgs match = ScanArgs.Builder.matches(keyPrefix + namePrefix + "*").limit(500);
        List<String> names = new ArrayList<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            ScanCursor from = cursor;
            KeyScanCursor<byte[]> page = call("SCAN", namePrefix + "*", c -> c.scan(from, match));
            for (byte[] key : page.getKeys()) names.add(string(key).substring(keyPrefix.length()));
            cursor = page;
        } while (!cursor.isFinished());
        return names;
    }

    /**
     * Returns when another client's write of {@code name} is announced ({@link RedisChangeFeed}), or
     * after {@code max}. A record that already differs from {@code version} returns at once; a read
     * that fails here just lets the wait run its bound (the caller's next attempt reports errors).
     */
    @Override
    public void awaitChange(String name, String version, Duration max) throws InterruptedException {
        changes.await(keyPrefix + name, max, () -> {
            try {
                return read(name).map(StoredRecord::version).filter(version::equals).isPresent();
            } catch (LockBackendException e) {
                return true;
            }
        });
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        try {
            changes.close();
        } finally {
            connection.close();
        }
    }

    private byte[] key(String name) {
        return bytes(keyPrefix + name);
    }

    private static byte[] newVersion() {
        byte[] random = new byte[16];
        RANDOM.nextBytes(random);
        return bytes(HexFormat.of().formatHex(random));
    }

    private <T> T call(String what, String name, RedisConnection.Command<T> command) {
        try {
            return connection.run(command);
        } catch (RedisCommandTimeoutException e) {
            throw new LockBackendException("Redis " + what + " of " + keyPrefix + name + " on " + description
                    + " timed out (a write's outcome is unknown); check the server and network, or raise timeout=", true, e);
        } catch (RedisCommandExecutionException e) {
            throw new LockBackendException("Redis " + what + " of " + keyPrefix + name + " on " + description
                    + " failed: " + e.getMessage() + RedisErrors.advice(e), RedisErrors.retriable(e), e);
        } catch (RedisException e) {
            throw new LockBackendException("Redis " + what + " of " + keyPrefix + name + " on " + description
                    + " failed: " + e.getMessage() + " (is the server up and reachable?)", true, e);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String string(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
