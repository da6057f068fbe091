package dev.latchkey.cli;

import dev.latchkey.InvalidLockKeyException;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockContext;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code latchkey} command. Every failure ends as one line on stderr and a documented exit
 * status ({@link ExitCodes}); a stack trace is printed only with {@code -v}. The environment is
 * passed in rather than read globally so tests can run the command in-process.
 */
@Command(name = "latchkey", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Distributed locks from the shell: run a command while holding a lock kept "
                + "in a file directory, PostgreSQL, ClickHouse, S3, GCS or Azure Blob.",
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {
            "0:Success (for run: the command's own status, 0..255).",
            "1:Operation not supported by the backend, or another lock error.",
            "2:Usage: bad option, bad or unknown URI (installed schemes are listed), invalid key.",
            "69:Backend unavailable: the store could not be reached or refused the request.",
            "70:Internal error in latchkey (run with -v for the stack trace).",
            "75:run: the lock was still busy after --wait; the holder is named on stderr (--busy-exit sets another status).",
            "76:run: the lease was lost while the command ran; the command was terminated.",
            "126/127:run: the command could not be executed / was not found.",
            "128+n:run: the command was killed by signal n."})
public final class LatchkeyCommand implements Callable<Integer> {

    @Option(names = {"-v", "--verbose"}, scope = ScopeType.INHERIT,
            description = "Show stack traces and backend logs on stderr.")
    boolean verbose; // read from the parse result (failure) and the raw arguments (main), as it applies before parsing

    private final Map<String, String> env;
    private final ReentrantLock backendsLoad = new ReentrantLock();
    private Backends backends; // guarded by backendsLoad; loaded on first use: commands that open no backend read no plugin

    LatchkeyCommand(Map<String, String> env) {
        this.env = env;
    }

    /** The environment the command was started with. */
    Map<String, String> env() {
        return env;
    }

    /** Opens the backend of {@code --uri} (or its fallbacks). */
    LockManager open(UriOption uri) {
        return backends().open(uri.resolve(env), LockContext.defaults());
    }

    /**
     * The built-in backends and the plugins; each plugin problem is printed once on stderr, as the
     * plugin is left out, so a broken install is never silent (and never fails another scheme).
     * Loaded once: a second caller waits while the first reads the plugins and prints their problems.
     */
    Backends backends() {
        backendsLoad.lock();
        try {
            if (backends == null) {
                backends = Backends.load(env);
                PrintWriter err = spec.commandLine().getErr();
                backends.problems().forEach(p -> err.println("latchkey: " + p));
                err.flush();
            }
            return backends;
        } finally {
            backendsLoad.unlock();
        }
    }

    /** {@code $HOME}, else the JVM's idea of it. */
    static String home(Map<String, String> env) {
        return env.getOrDefault("HOME", System.getProperty("user.home"));
    }

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        // `latchkey` alone: show what it can do, and say by the status that nothing was done
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    public static void main(String[] args) {
        configureLogging(verboseRequested(args));
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(new PrintStream(System.err, true, Charset.defaultCharset()), true);
        int status;
        try {
            status = forArgs(System.getenv(), out, err, args).execute(args);
        } catch (Throwable fatal) {
            // an Error picocli lets through (OutOfMemoryError, StackOverflowError) ended the main thread:
            // a JVM left alive by other threads would keep CMD running with nobody watching its lease.
            // halt, not exit: no shutdown hook needs a thread or memory; CMD's guard reads the end of
            // its pipe and kills the job, and the lease ends at its TTL
            try {
                err.println("latchkey: fatal: " + fatal + "; CMD's processes are being killed");
                err.flush();
            } finally {
                Runtime.getRuntime().halt(ExitCodes.SOFTWARE);
            }
            return;
        }
        out.flush();
        err.flush();
        System.exit(status);
    }

    /** The configured command line; {@code out}/{@code err} receive everything latchkey itself prints. */
    static CommandLine commandLine(Map<String, String> env, PrintWriter out, PrintWriter err) {
        return commandLine(env, out, err, SUBCOMMANDS.keySet());
    }

    /**
     * The command line for {@code args}: with only the subcommand {@code args[0]} names, when it names
     * one. Picocli builds the option model of every subcommand it is given, by reflection, in each run
     * of a short-lived JVM: the six a run does not use cost about a sixth of {@code latchkey run}'s
     * start. Anything else ({@code --help}, which lists them; a misspelt subcommand) gets them all.
     */
    static CommandLine forArgs(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
        String first = args.length > 0 ? args[0] : "";
        return commandLine(env, out, err, SUBCOMMANDS.containsKey(first) ? Set.of(first) : SUBCOMMANDS.keySet());
    }

    /** The subcommands by name, in the order {@code latchkey --help} lists them. */
    private static final Map<String, Class<?>> SUBCOMMANDS = subcommands(RunCommand.class, StatusCommand.class,
            ListCommand.class, ReleaseCommand.class, BackendsCommand.class, BenchCommand.class, CheckCommand.class);

    private static Map<String, Class<?>> subcommands(Class<?>... commands) {
        Map<String, Class<?>> byName = new LinkedHashMap<>();
        for (Class<?> c : commands) byName.put(c.getAnnotation(Command.class).name(), c);
        return Collections.unmodifiableMap(byName);
    }

    private static CommandLine commandLine(Map<String, String> env, PrintWriter out, PrintWriter err, Set<String> names) {
        CommandLine cl = new CommandLine(new LatchkeyCommand(env));
        SUBCOMMANDS.forEach((name, command) -> {
            if (names.contains(name)) cl.addSubcommand(name, command);
        });
        cl.setOut(out);
        cl.setErr(err);
        // everything after CMD belongs to CMD, even without "--": `run --key k ls -l` must not parse -l
        CommandLine run = cl.getSubcommands().get("run");
        if (run != null) run.setStopAtPositional(true).setCaseInsensitiveEnumValuesAllowed(true);
        // classes, not method references: a lambda of an interface of picocli (class-file version 49) has the
        // launcher's class-data sharing dump link that interface, which leaves it, picocli's default handler
        // and the lambda out of the archive, to be read from the jar and verified on every start
        cl.setParameterExceptionHandler(new UsageError());
        cl.setExecutionExceptionHandler(new Failure());
        cl.setCommandName("latchkey");
        return cl;
    }

    /** A bad command line: one line naming the (sub)command and its {@code --help}; status 2. */
    private static final class UsageError implements CommandLine.IParameterExceptionHandler {
        @Override
        public int handleParseException(CommandLine.ParameterException ex, String[] args) {
            CommandLine cmd = ex.getCommandLine();
            PrintWriter err = cmd.getErr();
            String name = cmd.getCommandSpec().qualifiedName();
            err.println(name + ": " + ex.getMessage() + " (see '" + name + " --help')");
            err.flush();
            return ExitCodes.USAGE;
        }
    }

    /** A command that failed: one line, the stack trace only with {@code -v}; the status {@link #statusOf} gives. */
    private static final class Failure implements CommandLine.IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parsed) {
            PrintWriter err = cmd.getErr();
            int status = statusOf(ex);
            String message = ex.getMessage() == null ? ex.getClass().getSimpleName() : ex.getMessage();
            if (status == ExitCodes.SOFTWARE) {
                err.println("latchkey: internal error: " + ex + (verbose(parsed) ? "" : " (run with -v for details)"));
            } else {
                err.println("latchkey: " + message.replace('\n', ' '));
            }
            if (verbose(parsed)) ex.printStackTrace(err);
            err.flush();
            return status;
        }
    }

    static int statusOf(Exception ex) {
        if (ex instanceof UnsupportedLockUriException || ex instanceof InvalidLockKeyException
                || ex instanceof IllegalArgumentException) {
            return ExitCodes.USAGE;
        }
        if (ex instanceof LockBackendException) return ExitCodes.UNAVAILABLE;
        if (ex instanceof LockTimeoutException) return ExitCodes.BUSY;
        if (ex instanceof LeaseLostException) return ExitCodes.LEASE_LOST;
        if (ex instanceof LockException || ex instanceof UnsupportedOperationException) return ExitCodes.FAILURE;
        return ExitCodes.SOFTWARE;
    }

    private static boolean verbose(ParseResult parsed) {
        for (ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) return true;
        }
        return false;
    }

    /** {@code -v} before any {@code --}: decided before picocli runs, since SDKs may log while loading. */
    static boolean verboseRequested(String[] args) {
        for (String a : args) {
            if (a.equals("--")) return false;
            if (a.equals("-v") || a.equals("--verbose")) return true;
        }
        return false;
    }

    /**
     * Backend SDKs log through SLF4J (slf4j-simple, to stderr) or java.util.logging. A lock command's
     * stderr belongs to the user and to CMD, so both stay silent unless {@code -v} asks for them;
     * an explicit {@code -Dorg.slf4j.simpleLogger.defaultLogLevel} wins.
     */
    private static void configureLogging(boolean verbose) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "off");
        }
        if (!verbose) Logger.getLogger("").setLevel(Level.OFF);
    }
}
