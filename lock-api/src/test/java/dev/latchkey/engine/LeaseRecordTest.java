package dev.latchkey.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.LockBackendException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LeaseRecordTest {

    @Test
    void roundTripKeepsEveryFieldIncludingLineBreakingCharacters() {
        LeaseRecord rec = new LeaseRecord(true, "a/b c%\n", "id-1", "me@host/1", 42, 7,
                Instant.ofEpochMilli(1_700_000_000_123L), 30_000, Instant.ofEpochMilli(1_700_000_001_456L),
                Map.of("cmd", "echo 1+1\r\n=2"));
        assertThat(LeaseRecord.decode(rec.encode(), "here")).isEqualTo(rec);
    }

    @Test
    void readsTheIsoTimesOfRecordsWrittenByTheFirstBuilds() {
        String old = "latchkey-lease 1\nstate=RELEASED\nkey=demo\nleaseId=0658a083\nowner=root%40vm%2F8391\n"
                + "token=1\nacquiredAt=2026-11-29T11%3A40%3A39.825084019Z\nttlMillis=60000\n"
                + "renewedAt=2026-11-29T11%3A40%3A39.825084019Z\nmeta.cmd=echo+hello\n";
        LeaseRecord rec = LeaseRecord.decode(old.getBytes(StandardCharsets.UTF_8), "here");
        assertThat(rec.held()).isFalse();
        assertThat(rec.token()).isEqualTo(1);
        assertThat(rec.owner()).isEqualTo("root@vm/8391");
        assertThat(rec.acquiredAt()).isEqualTo(Instant.parse("2026-11-29T11:40:39.825084019Z"));
    }

    @Test
    void aDamagedRecordSaysWhereItIsAndWhatToDo() {
        byte[] damaged = "latchkey-lease 1\nstate=HELD\nkey=k\ntoken=x\n".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeaseRecord.decode(damaged, "s3://b/p/k.lock"))
                .isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("s3://b/p/k.lock")
                .hasMessageContaining("delete it by hand");
    }

    @Test
    void anotherProgramsObjectIsNotMistakenForARecord() {
        assertThatThrownBy(() -> LeaseRecord.decode("{\"json\":1}".getBytes(StandardCharsets.UTF_8), "here"))
                .isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("not a latchkey lease record");
    }
}
