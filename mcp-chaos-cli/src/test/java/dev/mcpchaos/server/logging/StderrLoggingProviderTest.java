package dev.mcpchaos.server.logging;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** When the command line names its own provider, and when it leaves SLF4J and logback their usual search. */
class StderrLoggingProviderTest {

    private static final List<String> PROPERTIES = List.of(StderrLoggingProvider.PROVIDER_PROPERTY,
            StderrLoggingProvider.VERBOSITY_PROPERTY, "logback.configurationFile");
    private final Map<String, String> saved = new HashMap<>();

    @BeforeEach
    void clear() {
        PROPERTIES.forEach(name -> saved.put(name, System.clearProperty(name)));
    }

    @AfterEach
    void restore() {
        PROPERTIES.forEach(name -> {
            if (saved.get(name) == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, saved.get(name));
            }
        });
    }

    @Test
    void byDefaultItNamesItselfAndQuietsSlf4jsInfoNote() {
        StderrLoggingProvider.install();
        assertEquals(StderrLoggingProvider.class.getName(), System.getProperty(StderrLoggingProvider.PROVIDER_PROPERTY));
        assertEquals("WARN", System.getProperty(StderrLoggingProvider.VERBOSITY_PROPERTY));
    }

    @Test
    void aLogbackConfigurationOfTheUsersOwnGoesThroughLogbacksUsualPath() {
        System.setProperty("logback.configurationFile", "/tmp/mine.xml");
        StderrLoggingProvider.install();
        assertNull(System.getProperty(StderrLoggingProvider.PROVIDER_PROPERTY));
        assertNull(System.getProperty(StderrLoggingProvider.VERBOSITY_PROPERTY));
    }

    @Test
    void aProviderTheUserNamedStays() {
        System.setProperty(StderrLoggingProvider.PROVIDER_PROPERTY, "org.example.Theirs");
        System.setProperty(StderrLoggingProvider.VERBOSITY_PROPERTY, "DEBUG");
        StderrLoggingProvider.install();
        assertEquals("org.example.Theirs", System.getProperty(StderrLoggingProvider.PROVIDER_PROPERTY));
        assertEquals("DEBUG", System.getProperty(StderrLoggingProvider.VERBOSITY_PROPERTY));
    }
}
