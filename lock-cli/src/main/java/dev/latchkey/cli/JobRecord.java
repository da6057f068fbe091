package dev.latchkey.cli;

import java.util.List;

/**
 * What {@code latchkey run} writes about CMD into the lock's record, the {@code cmd} metadata that
 * {@code status} and {@code list} show to every client of the store.
 *
 * <p><b>Guarantee.</b> By default the record holds CMD's program as typed and how many arguments
 * followed it, never the arguments themselves (they may hold secrets: {@code mysqldump -pHunter2});
 * only {@code --record-args} puts the whole command line there. Either way the text is printable and
 * at most {@link #MAX} characters.
 */
final class JobRecord {
    static final int MAX = 256;

    private JobRecord() {}

    /** The {@code cmd} metadata of {@code command}. */
    static String describe(List<String> command, boolean withArguments) {
        if (withArguments) return printable(String.join(" ", command));
        int args = command.size() - 1;
        return printable(command.get(0)) + (args == 0 ? "" : " (" + args + (args == 1 ? " argument" : " arguments")
                + ", not recorded)");
    }

    /** Control characters as {@code ?}, cut to {@link #MAX} characters. */
    static String printable(String text) {
        String s = text.codePoints()
                .map(c -> Character.isISOControl(c) ? '?' : c)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                .toString();
        return s.length() <= MAX ? s : s.substring(0, MAX - 1) + "…";
    }
}
