package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/** The command run in-process, as the tests of its arguments, messages and statuses need it. */
final class InProcessCli {
    private InProcessCli() {}

    /** Exit status and what latchkey printed. */
    record Result(int status, String out, String err) {
        String errLine() {
            assertThat(err.lines()).as("stderr of latchkey: %s", err).hasSize(1);
            return err.strip();
        }
    }

    static Result latchkey(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = LatchkeyCommand.forArgs(env, new PrintWriter(out, true), new PrintWriter(err, true), args).execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    static Result latchkey(String... args) {
        return latchkey(Map.of(), args);
    }
}
