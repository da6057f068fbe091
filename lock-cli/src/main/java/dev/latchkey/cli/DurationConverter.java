package dev.latchkey.cli;

import dev.latchkey.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A duration on the command line, in any form {@link Durations#parse} reads ({@code 30s}, {@code 2d}, {@code PT30S}); a bad one is a usage error. */
final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
