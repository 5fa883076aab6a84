package dev.mcpchaos.server.logging;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.net.URL;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When {@link StderrLogging} does not search the class path for a {@code logback-test.xml}: only
 * when the class path is its own jar alone, the launcher's (built without one).
 */
class StderrLoggingTest {

    @TempDir
    Path dir;

    @Test
    void onlyTheJarItCameFromAloneIsNotSearched() throws Exception {
        Path jar = dir.resolve("mcp-chaos.jar");
        URL location = jar.toUri().toURL();
        assertTrue(StderrLogging.isOnlyEntry(jar.toString(), location));
        // As the launcher names it: through "." in the checkout's path.
        assertTrue(StderrLogging.isOnlyEntry(dir.resolve(".").resolve("mcp-chaos.jar").toString(), location));

        assertFalse(StderrLogging.isOnlyEntry(jar + File.pathSeparator + dir.resolve("tests.jar"), location),
                "another entry may hold one");
        assertFalse(StderrLogging.isOnlyEntry(dir.resolve("other.jar").toString(), location), "another jar");
        assertFalse(StderrLogging.isOnlyEntry(dir.toString(), dir.toUri().toURL()), "a directory (the tests')");
        assertFalse(StderrLogging.isOnlyEntry(jar.toString(), null), "no code source");
        assertFalse(StderrLogging.isOnlyEntry(null, location));
        assertFalse(StderrLogging.isOnlyEntry("", location));
    }
}
