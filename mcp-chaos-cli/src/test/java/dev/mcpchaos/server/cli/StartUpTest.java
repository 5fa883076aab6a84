package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The system properties {@link StartUp} sets before Netty reads them. Netty reads each once, when
 * its class is initialized, so changing them here does not change this JVM's Netty: the suite
 * keeps its paranoid leak detection.
 */
class StartUpTest {

    private static final String OLD_NAME = "io.netty.leakDetectionLevel";
    private static final String[] PROPERTIES = {StartUp.LEAK_DETECTION_LEVEL, OLD_NAME, "io.netty.jfr.enabled",
        StartUp.ALLOCATOR_TYPE};

    private final Map<String, String> before = new HashMap<>();

    @BeforeEach
    void saveProperties() {
        for (String name : PROPERTIES) {
            before.put(name, System.getProperty(name));
            System.clearProperty(name);
        }
    }

    @AfterEach
    void restoreProperties() {
        before.forEach((name, value) -> {
            if (value == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, value);
            }
        });
    }

    @Test
    void leakDetectionAndNettysJfrEventsAreOffWhenNothingSaysOtherwise() {
        StartUp.begin(new String[] {"validate", "rules.yaml"}).awaitLogging();

        assertThat(System.getProperty(StartUp.LEAK_DETECTION_LEVEL)).isEqualTo("disabled");
        assertThat(System.getProperty("io.netty.jfr.enabled")).isEqualTo("false");
    }

    @Test
    void aLeakDetectionLevelTheUserGaveIsKeptUnderEitherName() {
        System.setProperty(StartUp.LEAK_DETECTION_LEVEL, "paranoid");
        StartUp.begin(new String[] {"validate", "rules.yaml"}).awaitLogging();
        assertThat(System.getProperty(StartUp.LEAK_DETECTION_LEVEL)).isEqualTo("paranoid");

        System.clearProperty(StartUp.LEAK_DETECTION_LEVEL);
        System.setProperty(OLD_NAME, "advanced");
        StartUp.begin(new String[] {"validate", "rules.yaml"}).awaitLogging();
        assertThat(System.getProperty(StartUp.LEAK_DETECTION_LEVEL)).isNull();
        assertThat(System.getProperty(OLD_NAME)).isEqualTo("advanced");
    }

    // setNettyProperties, not begin: begin("stdio") would start the warm-up thread, which
    // initializes this JVM's Netty with the properties under test (and its leak detection off).
    @Test
    void aStdioProxyGetsThePooledAllocatorAsNettysDefault() {
        StartUp.setNettyProperties(new String[] {"stdio", "--quiet", "--", "cat"});

        assertThat(System.getProperty(StartUp.ALLOCATOR_TYPE)).isEqualTo("pooled");
        assertThat(System.getProperty(StartUp.LEAK_DETECTION_LEVEL)).isEqualTo("disabled");
    }

    @Test
    void otherCommandsKeepNettysAllocatorDefaults() {
        StartUp.setNettyProperties(new String[] {"http", "--upstream", "http://127.0.0.1:1/mcp"});
        StartUp.setNettyProperties(new String[] {"replay", "cassette.ndjson"});
        StartUp.setNettyProperties(new String[] {"--", "stdio"});

        assertThat(System.getProperty(StartUp.ALLOCATOR_TYPE)).isNull();
    }

    @Test
    void anAllocatorTypeTheUserGaveIsKept() {
        System.setProperty(StartUp.ALLOCATOR_TYPE, "adaptive");

        StartUp.setNettyProperties(new String[] {"stdio", "--", "cat"});

        assertThat(System.getProperty(StartUp.ALLOCATOR_TYPE)).isEqualTo("adaptive");
    }
}
