package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static java.util.Map.entry;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The typed options of the client factories reach a URI as the parameters a user would write. */
class UriOptionsTest {
    /** As a backend's options class is written. */
    static final class Options extends UriOptions<Options> {
        Options poll(Duration poll) { return set("poll", poll); }
        Options pool(int pool) { return set("pool", pool); }
        Options fencing(boolean fencing) { return set("fencing", fencing); }
        Options unit(TimeUnit unit) { return set("unit", unit); }
        Options table(String table) { return set("table", table); }
        Options prefix(String prefix) { return path(prefix); }
        LockUri asUri() { return toUri("x://host"); }
    }

    @Test
    void eachTypeIsSpelledAsInAUri() {
        LockUri uri = new Options().poll(Duration.ofSeconds(2)).pool(8).fencing(false).unit(TimeUnit.SECONDS)
                .table("locks of mine").asUri();
        assertThat(uri.params()).containsExactly(
                entry("poll", "2000ms"), entry("pool", "8"), entry("fencing", "false"), entry("unit", "seconds"),
                entry("table", "locks of mine"));
        assertThat(uri.host()).isEqualTo("host");
        assertThat(uri.path()).isEmpty();
        assertThat(new Options().prefix("a/b").asUri().path()).isEqualTo("/a/b");
    }

    @Test
    void theLastValueOfAParameterWinsAndNullIsRefusedByName() {
        assertThat(new Options().pool(1).pool(2).asUri().params()).containsExactly(entry("pool", "2"));
        assertThatThrownBy(() -> new Options().table(null)).isInstanceOf(NullPointerException.class).hasMessage("table");
        assertThatThrownBy(() -> new Options().poll(null)).isInstanceOf(NullPointerException.class).hasMessage("poll");
    }
}
