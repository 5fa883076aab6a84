package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.core.transport.http.HttpSettings;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

import java.net.URI;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The defaults {@code mcp-chaos http} shows in its help are the transport's own: each option's
 * default is declared in {@link HttpSettings.Builder}, and the command line's text for it (which
 * {@code --help} prints, and which the command passes on as if given) must say the same value.
 */
class HttpCommandDefaultsTest {

    /** An option of the command, how the command reads its text, and the setting it maps to. */
    private record Mapped(String option, Function<String, Object> parse, Function<HttpSettings, Object> setting) {
    }

    private static Mapped size(String option, Function<HttpSettings, Integer> setting) {
        return new Mapped(option, Units::parseSize, s -> setting.apply(s).longValue());
    }

    private static Mapped count(String option, Function<HttpSettings, Integer> setting) {
        return new Mapped(option, Integer::valueOf, setting::apply);
    }

    private static Mapped duration(String option, Function<HttpSettings, Object> setting) {
        return new Mapped(option, Units::parseDuration, setting);
    }

    @Test
    void everyTransportDefaultTheCommandShowsIsTheSettingsDefault() {
        HttpSettings defaults = HttpSettings.builder(URI.create("http://127.0.0.1:3001/mcp")).build();
        List<Mapped> options = List.of(
                size("--max-request-body", HttpSettings::maxRequestBody),
                size("--max-sse-event", HttpSettings::maxSseEventSize),
                count("--max-connections", HttpSettings::maxConnections),
                count("--max-sessions", HttpSettings::maxSessions),
                new Mapped("--min-request-body-rate", HttpCommand::parseRate, HttpSettings::minRequestBodyRate),
                duration("--response-timeout", HttpSettings::responseTimeout),
                duration("--response-body-timeout", HttpSettings::responseBodyTimeout),
                duration("--idle-timeout", HttpSettings::idleTimeout),
                duration("--session-idle-timeout", HttpSettings::sessionIdleTimeout),
                duration("--request-head-timeout", HttpSettings::requestHeadTimeout),
                duration("--request-body-timeout", HttpSettings::requestBodyTimeout),
                duration("--send-timeout", HttpSettings::sendTimeout));
        CommandSpec http = new CommandLine(new HttpCommand()).getCommandSpec();
        for (Mapped mapped : options) {
            String text = http.findOption(mapped.option()).defaultValue();
            assertThat(text).as(mapped.option()).isNotNull();
            assertThat(mapped.parse().apply(text)).as("%s's default, %s", mapped.option(), text)
                    .isEqualTo(mapped.setting().apply(defaults));
        }
    }
}
