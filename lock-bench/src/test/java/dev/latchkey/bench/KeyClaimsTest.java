package dev.latchkey.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A claimed key is busy for every other round until its work ends, also when the work throws. */
class KeyClaimsTest {

    @Test
    void aKeyIsBusyWhileAnotherThreadsRoundWorksOnIt() throws Exception {
        KeyClaims claims = new KeyClaims();
        CountDownLatch working = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        FutureTask<Boolean> holder = new FutureTask<>(() -> claims.round(3, () -> {
            working.countDown();
            finish.await();
        }));
        Thread thread = new Thread(holder, "claim-holder");
        thread.setDaemon(true);
        thread.start();
        assertThat(working.await(30, TimeUnit.SECONDS)).as("the holder's work started").isTrue();

        assertThat(claims.round(3, ran::incrementAndGet)).as("key 3 while claimed").isFalse();
        assertThat(ran).as("a busy round runs nothing").hasValue(0);
        assertThat(claims.round(4, ran::incrementAndGet)).as("another key").isTrue();
        assertThat(ran).hasValue(1);

        finish.countDown();
        assertThat(holder.get(30, TimeUnit.SECONDS)).isTrue();
        assertThat(claims.round(3, ran::incrementAndGet)).as("key 3 once given back").isTrue();
        assertThat(ran).hasValue(2);
    }

    @Test
    void aFailedRoundGivesItsKeyBack() throws Exception {
        KeyClaims claims = new KeyClaims();
        assertThatThrownBy(() -> claims.round(7, () -> {
            throw new IOException("store down");
        })).isExactlyInstanceOf(IOException.class).hasMessage("store down");
        assertThat(claims.round(7, () -> {})).as("key 7 after the failed round").isTrue();
    }

    @Test
    void claimsOfOneObjectAreNotAnothers() {
        KeyClaims mine = new KeyClaims();
        KeyClaims theirs = new KeyClaims();
        assertThat(mine.round(1, () -> assertThat(theirs.round(1, () -> {})).isTrue())).isTrue();
    }
}
