package dev.mcpchaos.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * JVM options for the short-lived helper JVMs mcp-chaos starts (the demo server, a stdio client
 * relay): tuned for start-up, and safe whatever the environment they inherit says.
 */
public final class ChildJvm {

    /** An option that picks (or unpicks) a garbage collector: {@code -XX:+UseG1GC}, {@code -XX:-UseSerialGC}... */
    private static final Pattern COLLECTOR = Pattern.compile("-XX:[+-]Use\\w*GC(?!\\w)");

    private ChildJvm() {
    }

    /** {@link #startupOptions(Map)} for this process's environment, which a child inherits. */
    public static List<String> startupOptions() {
        return startupOptions(System.getenv());
    }

    /**
     * C1 only and the class-data archive, and the Serial collector unless {@code JAVA_TOOL_OPTIONS}
     * or {@code JDK_JAVA_OPTIONS} in {@code environment} names a collector: the JVM refuses to
     * start with two ("Multiple garbage collectors selected"), and a user's choice there must not
     * stop the demo server from starting.
     */
    public static List<String> startupOptions(Map<String, String> environment) {
        List<String> options = new ArrayList<>(List.of("-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        if (!namesCollector(environment.get("JAVA_TOOL_OPTIONS"))
                && !namesCollector(environment.get("JDK_JAVA_OPTIONS"))) {
            options.add("-XX:+UseSerialGC");
        }
        return List.copyOf(options);
    }

    /**
     * {@code java}, the {@link #startupOptions()}, this process's class path, then {@code mainClass}
     * and its {@code arguments}: a helper JVM running code of this same class path.
     */
    public static List<String> command(String java, String mainClass, String... arguments) {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(startupOptions());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(List.of(arguments));
        return List.copyOf(command);
    }

    private static boolean namesCollector(String options) {
        return options != null && COLLECTOR.matcher(options).find();
    }
}
