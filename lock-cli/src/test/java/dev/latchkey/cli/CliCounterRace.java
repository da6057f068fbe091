package dev.latchkey.cli;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * The lock as a shell user relies on it: {@code processes} loops, each running {@code rounds}
 * times {@code latchkey run --key c --wait 60s -- sh -c 'n=$(cat f); echo $((n+1)) > f'} against
 * one backend URI. Any two critical sections that overlap lose an increment, so the final count is
 * exactly {@code processes × rounds} only if the lock excluded every pair. Each run uses a fresh
 * key, so a shared server can host several races.
 */
final class CliCounterRace {

    /** The counter's final value, what it should be, and every latchkey run that did not exit 0. */
    record Result(int counter, int expected, List<String> failures) {}

    private CliCounterRace() {}

    static Result run(String uri, int processes, int rounds) throws Exception {
        Path dir = Files.createTempDirectory("latchkey-counter-");
        Path counter = dir.resolve("f");
        Files.writeString(counter, "0\n");
        String key = "counter-race-" + UUID.randomUUID();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(processes);
        try {
            List<Future<?>> loops = new ArrayList<>();
            for (int p = 0; p < processes; p++) {
                loops.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        JarCli.Result result = JarCli.run(dir, "run", "--uri", uri, "--key", key, "--wait", "60s",
                                "--", "sh", "-c", "n=$(cat f); echo $((n+1)) > f");
                        if (result.status() != 0) failures.add("exit " + result.status() + ": " + result.err().strip());
                    }
                    return null;
                }));
            }
            for (Future<?> loop : loops) loop.get();
            int value = Integer.parseInt(Files.readString(counter, StandardCharsets.UTF_8).strip());
            return new Result(value, processes * rounds, failures);
        } finally {
            pool.shutdownNow();
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
