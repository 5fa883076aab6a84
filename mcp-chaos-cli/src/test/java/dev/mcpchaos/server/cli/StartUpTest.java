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
    private static final String[] PROPERTIES = {StartUp.LEAK_DETECTION_LEVEL, OLD_NAME, "io.netty.jfr.enabled"};

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
}
