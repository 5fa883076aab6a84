package dev.mcpchaos.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/**
 * Writes {@link FastStart}'s table at build time, from picocli's model of the commands it takes,
 * so that each option stays declared once (by its annotation). One line per option or positional
 * parameter: command, kind, names, the path of fields from the command object to the one it
 * sets, arity, whether it takes several values, and its default ({@code =value}, or {@code -}).
 * An option picocli sets through a method, or in a way the table cannot say, is written as
 * {@code UNSUPPORTED}, and then {@link FastStart} leaves that command to picocli. Public only for the
 * build (exec:java); not API.
 */
public final class FastStartTable {

    private FastStartTable() {
    }

    /** Writes the table to the file {@code args[0]}. */
    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, table(), StandardCharsets.UTF_8);
    }

    /** The table's text. */
    static String table() {
        StringBuilder text = new StringBuilder("# Generated at build time by FastStartTable from picocli's model; "
                + "read by FastStart. Do not edit.\n");
        for (Map.Entry<String, java.util.function.Supplier<Callable<Integer>>> entry
                : new TreeMap<>(FastStart.COMMANDS).entrySet()) {
            Object command = entry.getValue().get();
            CommandSpec spec = new CommandLine(command).getCommandSpec();
            Map<Object, String> paths = new IdentityHashMap<>();
            paths.put(command, "");
            mixinPaths(command, "", paths);
            for (ArgSpec arg : spec.args()) {
                text.append(line(entry.getKey(), arg, paths)).append('\n');
            }
        }
        return text.toString();
    }

    private static String line(String command, ArgSpec arg, Map<Object, String> paths) {
        String kind;
        String names = "";
        if (arg instanceof OptionSpec option) {
            names = String.join(",", option.names());
            kind = option.usageHelp() || option.versionHelp() ? "HELP" : "OPTION";
        } else {
            kind = "POSITIONAL";
        }
        String path = "-";
        if (!kind.equals("HELP")) {
            Object owner = arg.scope() == null ? null : scopeOf(arg);
            if (arg.userObject() instanceof Field field && owner != null && paths.containsKey(owner)) {
                String prefix = paths.get(owner);
                path = prefix.isEmpty() ? field.getName() : prefix + "." + field.getName();
            } else {
                kind = "UNSUPPORTED";
            }
        }
        String defaultValue = arg.defaultValue() == null ? "-" : "=" + arg.defaultValue();
        String line = String.join("\t", command, kind, names, path, arg.arity().toString(),
                Boolean.toString(arg.isMultiValue()), defaultValue);
        if (line.chars().filter(c -> c == '\t').count() != 6 || line.indexOf('\n') >= 0) {
            throw new IllegalStateException("FastStartTable: a tab or a line break in " + line);
        }
        return line;
    }

    private static Object scopeOf(ArgSpec arg) {
        try {
            return arg.scope().get();
        } catch (Exception e) {
            return null;
        }
    }

    /** The path of every mixin object under {@code owner} (fields holding objects of this package). */
    private static void mixinPaths(Object owner, String prefix, Map<Object, String> paths) {
        for (Class<?> type = owner.getClass(); type != null && type != Object.class; type = type.getSuperclass()) {
            for (Field field : type.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()
                        || !field.getType().getPackageName().equals(FastStartTable.class.getPackageName())) {
                    continue;
                }
                field.setAccessible(true);
                Object value;
                try {
                    value = field.get(owner);
                } catch (IllegalAccessException e) {
                    continue;
                }
                if (value != null && !paths.containsKey(value)) {
                    String path = prefix.isEmpty() ? field.getName() : prefix + "." + field.getName();
                    paths.put(value, path);
                    mixinPaths(value, path, paths);
                }
            }
        }
    }
}
