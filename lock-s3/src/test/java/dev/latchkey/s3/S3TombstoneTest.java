package dev.latchkey.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A delete that wrote its tombstone but never removed it (its {@code DeleteObject} failed): the
 * tombstone reads as absent, and of clients racing to create the record exactly one wins, by a
 * conditional replace of the tombstone.
 */
class S3TombstoneTest {
    private final String uri = S3Server.uri();

    @Test
    void aLeftoverTombstoneReadsAsAbsentAndExactlyOneRacingCreateTakesItsPlace() throws Exception {
        String name = "tomb-" + UUID.randomUUID().toString().substring(0, 8);
        List<S3ConditionalStore> stores = new ArrayList<>();
        for (int i = 0; i < 4; i++) stores.add(S3Server.newStore(uri));
        ExecutorService pool = Executors.newFixedThreadPool(stores.size());
        try {
            // what delete leaves when its DeleteObject fails: its first step, the record replaced by a tombstone
            String v = stores.get(0).create(name, "record".getBytes(StandardCharsets.UTF_8)).orElseThrow();
            stores.get(0).replaceAt(stores.get(0).objectKey(name), v,
                    ("latchkey-tombstone:" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII)).orElseThrow();
            assertThat(stores.get(0).read(name)).as("a record holding a tombstone").isEmpty();

            List<Future<Optional<String>>> creates = new ArrayList<>();
            for (int i = 0; i < stores.size(); i++) {
                S3ConditionalStore s = stores.get(i);
                byte[] data = ("creator " + i).getBytes(StandardCharsets.UTF_8);
                creates.add(pool.submit((Callable<Optional<String>>) () -> s.create(name, data)));
            }
            List<String> won = new ArrayList<>();
            for (Future<Optional<String>> f : creates) f.get().ifPresent(won::add);
            assertThat(won).as("creates that won over the tombstone").hasSize(1);
            assertThat(stores.get(1).read(name).map(r -> r.version())).contains(won.get(0));
        } finally {
            pool.shutdownNow();
            stores.forEach(S3ConditionalStore::close);
        }
    }
}
