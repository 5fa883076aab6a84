package dev.mcpchaos.server.cli;

import java.lang.reflect.Field;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * Runs {@code stdio} and {@code replay} without picocli when their command line is a plain one.
 *
 * <p>Why: a test that spawns a fixture per test pays the proxy's start-up on every spawn, and
 * picocli's start-up (its own initialisation and the reflection over a command's annotations)
 * was 110-150 ms of a cold {@code replay}'s 500 ms to its first answer. The options are still
 * declared once, with picocli's annotations: at build time {@link FastStartTable} writes picocli's
 * model of these commands (names, arity, the field each sets, default) into a table, the constant
 * of a class of its own ({@value #TABLE_CLASS}), and this class reads it, fills the same command
 * object picocli would, and calls it.
 *
 * <p>Everything here runs before a stdio proxy starts its server, so it links no lambda, stream
 * or regular expression of its own (each is linked on first use, which cost milliseconds cold),
 * and the table is a class, which comes from the class-data archive with the others: as a
 * resource it was read from the jar, whose index of 11,000 entries took 20-50 ms to read.
 *
 * <p>It takes only what it is sure of: known long options as {@code --name value} or
 * {@code --name=value}, known short ones as {@code -e value}, flags, values that do not begin
 * with {@code -}, each single-valued option once, positional parameters where the command takes
 * them, values of types it converts exactly as picocli does (strings, paths, decimal integers,
 * lists, {@code NAME=VALUE} maps). Anything else (help, {@code @files}, an unknown option, an
 * option given by an {@code MCP_CHAOS_*} variable, a value it would have to guess about) makes it
 * decline, and picocli parses the command line as before, with its usage and error messages.
 * {@code FastStartTest} checks on every option that both give the same command object.
 */
final class FastStart {

    /** The class {@link FastStartTable} writes at build time, whose constant {@value #TABLE_FIELD} is the table. */
    static final String TABLE_CLASS = "dev.mcpchaos.server.cli.FastStartData";
    /** The name of the table's constant in {@link #TABLE_CLASS}. */
    static final String TABLE_FIELD = "TEXT";

    /** The commands this takes, in the table's order. */
    static final List<String> COMMANDS = List.of("replay", "stdio");

    /** The longest decimal number taken (one more digit may not fit a long: picocli's business). */
    private static final int MAX_DIGITS = 18;

    /** One option or positional parameter of a command, as the table gives it. */
    record Arg(String command, Kind kind, List<String> names, List<String> path, String arity, boolean multiValue,
               String defaultValue) {
        boolean takesValue() {
            return !arity.equals("0");
        }
    }

    /** What an entry of the table is. */
    enum Kind { OPTION, POSITIONAL, HELP, UNSUPPORTED }

    private static volatile Map<String, List<Arg>> table;

    private FastStart() {
    }

    /**
     * The command object for {@code args} filled as picocli would fill it, or null when this
     * declines (the caller then runs picocli).
     */
    static Callable<Integer> parse(String[] args, Map<String, String> env) {
        if (args.length == 0 || !COMMANDS.contains(args[0])) {
            return null;
        }
        List<Arg> spec = table().get(args[0]);
        if (spec == null) {
            return null;
        }
        for (Arg arg : spec) {
            if (arg.kind() == Kind.UNSUPPORTED) {
                return null;
            }
        }
        Callable<Integer> command = newCommand(args[0]);
        return fill(command, spec, args, env) ? command : null;
    }

    /** A new, unfilled command object for {@code name}, one of {@link #COMMANDS}. */
    static Callable<Integer> newCommand(String name) {
        switch (name) {
            case "stdio":
                return new StdioCommand();
            case "replay":
                return new ReplayCommand();
            default:
                throw new IllegalArgumentException("command: " + name + " (expected: one of " + COMMANDS + ")");
        }
    }

    /**
     * Calls {@code command} as {@link Main} has picocli call it: its result is the exit code; an
     * exception is one line on stderr, with code 2 for a value that cannot be used and 1 for the
     * rest.
     */
    static int run(Callable<Integer> command) {
        try {
            Integer code = command.call();
            return code == null ? 0 : code;
        } catch (Exception e) {
            System.err.println("mcp-chaos: " + e.getMessage());
            return OptionValueException.exitCodeOf(e);
        }
    }

    private static boolean fill(Object command, List<Arg> spec, String[] args, Map<String, String> env) {
        Map<String, Arg> byName = new HashMap<>();
        Arg positional = null;
        // Usually no MCP_CHAOS_* variable is set: then no option's variable name is made (a regular
        // expression and a string concatenation each, which the JVM links on first use).
        boolean variables = false;
        for (String name : env.keySet()) {
            variables |= name.startsWith(EnvironmentDefaults.PREFIX);
        }
        for (Arg arg : spec) {
            if (arg.kind() == Kind.POSITIONAL) {
                positional = arg;
            }
            for (String name : arg.names()) {
                byName.put(name, arg);
            }
            String variable = variables && arg.kind() == Kind.OPTION
                    ? EnvironmentDefaults.variableOf(arg.command(), longest(arg)) : null;
            if (variable != null && env.get(variable) != null && !env.get(variable).isEmpty()) {
                // A value from an MCP_CHAOS_* variable: picocli's provider, and its messages naming the variable.
                return false;
            }
        }
        // By identity (each Arg is one object of the table): a record's own hashCode is bootstrapped
        // through invokedynamic on its first call, which spun method-handle classes for 30-80 ms
        // before the server was started.
        Map<Arg, List<String>> given = new IdentityHashMap<>();
        List<String> positionals = new ArrayList<>();
        boolean afterDoubleDash = false;
        for (int i = 1; i < args.length; i++) {
            String token = args[i];
            if (afterDoubleDash) {
                positionals.add(token);
                continue;
            }
            if (token.equals("--")) {
                if (positional == null || !positional.command().equals("stdio")) {
                    return false; // replay's "--verify -- COMMAND": picocli's business
                }
                afterDoubleDash = true;
                continue;
            }
            if (token.startsWith("@")) {
                return false; // an argument file
            }
            if (token.startsWith("-") && token.length() > 1) {
                String name = token;
                String inline = null;
                int equals = token.indexOf('=');
                if (token.startsWith("--") && equals > 0) {
                    name = token.substring(0, equals);
                    inline = token.substring(equals + 1);
                }
                Arg arg = byName.get(name);
                if (arg == null || arg.kind() != Kind.OPTION || arg.arity().equals("0..1")) {
                    return false; // unknown, help, or an optional value picocli resolves by what follows
                }
                if (given.containsKey(arg) && !arg.multiValue()) {
                    return false; // picocli refuses a single-valued option given twice
                }
                List<String> values = given.get(arg);
                if (values == null) {
                    values = new ArrayList<>();
                    given.put(arg, values);
                }
                if (!arg.takesValue()) {
                    if (inline != null) {
                        return false;
                    }
                    values.add("true");
                    continue;
                }
                String value = inline;
                if (value == null) {
                    if (i + 1 >= args.length) {
                        return false;
                    }
                    value = args[++i];
                }
                if (value.startsWith("-") || value.startsWith("@")) {
                    return false; // an option's name or a negative number: picocli decides
                }
                values.add(value);
                continue;
            }
            if (positional == null || !positional.command().equals("replay")) {
                // stdio's command comes after "--": before it, picocli decides where options stop.
                return false;
            }
            positionals.add(token);
        }
        if (positional != null && positionals.isEmpty() || positional == null && !positionals.isEmpty()) {
            return false; // picocli's "missing parameter" or "unmatched argument"
        }
        try {
            for (Arg arg : spec) {
                if (arg.kind() == Kind.OPTION) {
                    List<String> values = given.get(arg);
                    if (values != null) {
                        if (!set(command, arg, values)) {
                            return false;
                        }
                    } else if (arg.defaultValue() != null && !set(command, arg, List.of(arg.defaultValue()))) {
                        return false;
                    }
                } else if (arg.kind() == Kind.POSITIONAL && !set(command, arg, positionals)) {
                    return false;
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false; // the object may be half filled: it is dropped, and picocli makes its own
        }
        return true;
    }

    private static String longest(Arg arg) {
        String longest = "";
        for (String name : arg.names()) {
            if (name.length() > longest.length()) {
                longest = name;
            }
        }
        return longest;
    }

    /** Sets the field {@code arg} names from {@code values}; false for a type or value it does not take. */
    private static boolean set(Object command, Arg arg, List<String> values) throws ReflectiveOperationException {
        Object owner = command;
        List<String> path = arg.path();
        for (int i = 0; i < path.size() - 1; i++) {
            owner = field(owner.getClass(), path.get(i)).get(owner);
            if (owner == null) {
                return false;
            }
        }
        Field field = field(owner.getClass(), path.get(path.size() - 1));
        Class<?> type = field.getType();
        if (List.class.equals(type)) {
            Class<?> element = elementType(field.getGenericType(), 0);
            List<Object> list = new ArrayList<>();
            for (String value : values) {
                Object converted = convert(element, value);
                if (converted == null) {
                    return false;
                }
                list.add(converted);
            }
            field.set(owner, list);
            return true;
        }
        if (Map.class.equals(type)) {
            if (elementType(field.getGenericType(), 0) != String.class || elementType(field.getGenericType(), 1) != String.class) {
                return false;
            }
            Map<String, String> map = new LinkedHashMap<>();
            for (String value : values) {
                int equals = value.indexOf('=');
                if (equals <= 0) {
                    return false;
                }
                map.put(value.substring(0, equals), value.substring(equals + 1));
            }
            field.set(owner, map);
            return true;
        }
        if (values.size() != 1) {
            return false;
        }
        Object converted = convert(type, values.get(0));
        if (converted == null) {
            return false;
        }
        field.set(owner, converted);
        return true;
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }

    private static Class<?> elementType(Type generic, int index) {
        if (generic instanceof ParameterizedType parameterized
                && parameterized.getActualTypeArguments()[index] instanceof Class<?> element) {
            return element;
        }
        return Object.class;
    }

    /** {@code value} as picocli converts it to {@code type}, or null for a type or value left to picocli. */
    private static Object convert(Class<?> type, String value) {
        if (type == String.class) {
            return value;
        }
        if (type == Path.class) {
            return Paths.get(value);
        }
        if (type == boolean.class || type == Boolean.class) {
            return value.equals("true") ? Boolean.TRUE : null;
        }
        if (isDecimal(value)) {
            if (type == Long.class || type == long.class) {
                return Long.valueOf(value);
            }
            if ((type == Integer.class || type == int.class) && value.length() <= 9) {
                return Integer.valueOf(value);
            }
        }
        return null;
    }

    /** Whether {@code value} is an optional minus and 1 to {@value #MAX_DIGITS} ASCII digits. */
    private static boolean isDecimal(String value) {
        int start = value.startsWith("-") ? 1 : 0;
        int digits = value.length() - start;
        if (digits < 1 || digits > MAX_DIGITS) {
            return false;
        }
        for (int i = start; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** The table, read once. */
    static Map<String, List<Arg>> table() {
        Map<String, List<Arg>> read = table;
        if (read == null) {
            read = readTable();
            table = read;
        }
        return read;
    }

    private static Map<String, List<Arg>> readTable() {
        String text = tableText();
        return text == null ? Map.of() : parseTable(text);
    }

    /**
     * The table's text from {@link #TABLE_CLASS}, or null for a build without it (an IDE's, which
     * does not run {@link FastStartTable}): then picocli does it all.
     */
    static String tableText() {
        try {
            Class<?> data = Class.forName(TABLE_CLASS, true, FastStart.class.getClassLoader());
            return (String) data.getDeclaredField(TABLE_FIELD).get(null);
        } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
            return null;
        }
    }

    /** The table's lines by command; empty (so nothing is taken) when a line is not as written. */
    static Map<String, List<Arg>> parseTable(String text) {
        Map<String, List<Arg>> commands = new HashMap<>();
        Set<String> seen = new HashSet<>();
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('\n', start);
            if (end < 0) {
                end = text.length();
            }
            String line = text.substring(start, end);
            start = end + 1;
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] cells = line.split("\t", -1);
            if (cells.length != 7 || !seen.add(line)) {
                return Map.of();
            }
            Kind kind = kind(cells[1]);
            if (kind == null) {
                return Map.of();
            }
            Arg arg = new Arg(cells[0], kind,
                    cells[2].isEmpty() ? List.of() : List.of(cells[2].split(",")),
                    List.of(cells[3].split("\\.")), cells[4], Boolean.parseBoolean(cells[5]),
                    cells[6].startsWith("=") ? cells[6].substring(1) : null);
            List<Arg> args = commands.get(arg.command());
            if (args == null) {
                args = new ArrayList<>();
                commands.put(arg.command(), args);
            }
            args.add(arg);
        }
        return commands;
    }

    /** The kind named {@code name}, or null (not {@link Kind#valueOf}, which goes through reflection). */
    private static Kind kind(String name) {
        for (Kind kind : Kind.values()) {
            if (kind.name().equals(name)) {
                return kind;
            }
        }
        return null;
    }
}
