package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link FastStart} against picocli: for the command lines it takes, the command object it fills
 * is the one picocli fills, field by field; the command lines it is not sure of it leaves to
 * picocli; and its table (written at build time) says what picocli's model says.
 */
class FastStartTest {

    @Test
    void theTableListsEveryOptionPicocliKnowsAndNoneItCannotSet() {
        for (String command : FastStart.COMMANDS) {
            List<FastStart.Arg> table = FastStart.table().get(command);
            assertNotNull(table, "no table for " + command + " (is FastStartData built?)");
            Set<String> fromTable = new TreeSet<>();
            table.forEach(arg -> fromTable.addAll(arg.names()));
            Set<String> fromPicocli = new TreeSet<>();
            CommandLine cli = Main.commandLine(Map.of(), command);
            cli.getSubcommands().get(command).getCommandSpec().options().forEach(o -> fromPicocli.addAll(List.of(o.names())));
            assertEquals(fromPicocli, fromTable, command);
            assertTrue(table.stream().noneMatch(arg -> arg.kind() == FastStart.Kind.UNSUPPORTED),
                    command + ": an option FastStart cannot set makes every " + command + " start through picocli");
            assertEquals(FastStartTable.table(), FastStart.tableText(), "FastStartData is stale: rebuild");
        }
    }

    @Test
    void plainCommandLinesFillTheSameObjectAsPicocli() {
        List<List<String>> lines = List.of(
                List.of("stdio", "--", "cat"),
                List.of("stdio", "--quiet", "--rules", "r.yaml", "--seed", "42", "--no-watch", "--", "node", "s.js", "--port", "3"),
                List.of("stdio", "--max-line-length", "1MiB", "--exit-timeout=2s", "--terminate-timeout", "3s",
                        "--cwd", "/tmp", "-e", "A=1", "-e", "B=x=y", "--env", "C=", "--", "cmd", "-e", "X"),
                List.of("stdio", "--record", "out/", "--redact-env", "TOKEN", "--redact-env", "KEY", "--check",
                        "--check-fail-on", "warning", "--journal", "off", "--", "npx", "-y", "server"),
                List.of("replay", "a.ndjson"),
                List.of("replay", "a.ndjson", "b.ndjson", "--quiet", "--match", "method", "--rules", "crash.yaml"),
                List.of("replay", "--match-ignore", "/params/x", "a.ndjson", "--match-ignore=/id", "--timing", "scaled:0.5",
                        "--on-exhausted", "error", "--seed=7", "--fail-on-unmatched"),
                everyOption("stdio"),
                everyOption("replay"));
        for (List<String> line : lines) {
            String[] args = line.toArray(String[]::new);
            Callable<Integer> fast = FastStart.parse(args, Map.of());
            assertNotNull(fast, "declined: " + line);
            CommandLine cli = Main.commandLine(Map.of(), args);
            cli.parseArgs(args);
            Object picocli = cli.getSubcommands().get(args[0]).getCommand();
            assertSameFields(picocli, fast, line.toString());
        }
    }

    @Test
    void whatItIsNotSureOfGoesToPicocli() {
        Map<String, List<String>> declined = new LinkedHashMap<>();
        declined.put("help", List.of("stdio", "--help"));
        declined.put("short help", List.of("replay", "a.ndjson", "-h"));
        declined.put("version", List.of("stdio", "-V"));
        declined.put("an argument file", List.of("replay", "@args.txt"));
        declined.put("an unknown option", List.of("stdio", "--no-such", "--", "cat"));
        declined.put("an optional value", List.of("stdio", "--log-traffic", "--", "cat"));
        declined.put("a single-valued option twice", List.of("stdio", "--rules", "a", "--rules", "b", "--", "cat"));
        declined.put("a value that begins with -", List.of("stdio", "--seed", "-1", "--", "cat"));
        declined.put("a number picocli reads its own way", List.of("stdio", "--seed", "0x10", "--", "cat"));
        declined.put("a number too big", List.of("stdio", "--seed", "99999999999999999999", "--", "cat"));
        declined.put("an option's value missing", List.of("replay", "a.ndjson", "--rules"));
        declined.put("a flag with a value", List.of("stdio", "--quiet=true", "--", "cat"));
        declined.put("stdio's command without --", List.of("stdio", "cat"));
        declined.put("stdio without a command", List.of("stdio", "--quiet", "--"));
        declined.put("replay without a file", List.of("replay", "--quiet"));
        declined.put("replay's -- (verify)", List.of("replay", "a.ndjson", "--verify", "--", "cmd"));
        declined.put("an attached short option", List.of("stdio", "-eA=1", "--", "cat"));
        declined.put("an -e without =", List.of("stdio", "-e", "A", "--", "cat"));
        declined.put("another command", List.of("http", "--upstream", "http://127.0.0.1:1/mcp"));
        declined.put("no command", List.of());
        for (Map.Entry<String, List<String>> entry : declined.entrySet()) {
            assertNull(FastStart.parse(entry.getValue().toArray(String[]::new), Map.of()), entry.getKey());
        }
        // A value from MCP_CHAOS_SEED: picocli reads it (and names the variable when it is refused).
        assertNull(FastStart.parse(new String[] {"stdio", "--", "cat"}, Map.of("MCP_CHAOS_SEED", "5")));
        // Twins: the same lines without what made them doubtful are taken.
        assertNotNull(FastStart.parse(new String[] {"stdio", "--", "cat"}, Map.of("MCP_CHAOS_SEED", "")));
        assertNotNull(FastStart.parse(new String[] {"stdio", "--seed", "16", "--", "cat"}, Map.of("OTHER", "5")));
        assertNotNull(FastStart.parse(new String[] {"replay", "a.ndjson", "--rules", "r.yaml"}, Map.of()));
    }

    /** The table's class, as FastStartTable writes it: a class file the JVM defines, whose constant is the text. */
    @Test
    void theTablesClassHoldsTheTextAsItsConstant() throws Exception {
        String text = "# a t\u00e4ble\nstdio\tOPTION\t--quiet\tchaos.quiet\t0\tfalse\t-\n\u0000 and \ud83d\ude00\n";
        byte[] file = FastStartTable.constantClass("dev.mcpchaos.server.cli.TableProbe", "TEXT", text);
        Class<?> defined = new ClassLoader(null) {
            Class<?> define() {
                return defineClass("dev.mcpchaos.server.cli.TableProbe", file, 0, file.length);
            }
        }.define();
        Field constant = defined.getDeclaredField("TEXT");
        assertEquals(Modifier.STATIC | Modifier.FINAL, constant.getModifiers());
        constant.setAccessible(true);
        assertEquals(text, constant.get(null));
        assertEquals(0, defined.getDeclaredMethods().length);
        // The build's own: the table FastStart reads is the one picocli's model gives.
        assertEquals(FastStartTable.table(), FastStart.tableText());
        assertEquals(FastStart.table(), FastStart.parseTable(FastStartTable.table()));
    }

    @Test
    void anExceptionIsOneLineAndTheCodePicocliWouldGive() {
        assertEquals(OptionValueException.EXIT_CODE, FastStart.run(() -> {
            throw new OptionValueException("--max-line-length: 0 (expected: 1B to 2GiB)");
        }));
        assertEquals(1, FastStart.run(() -> {
            throw new IllegalStateException("boom");
        }));
        assertEquals(70, FastStart.run(() -> 70));
    }

    /** A command line with every option of {@code command} the fast start takes, each with a value of its type. */
    private static List<String> everyOption(String command) {
        List<String> line = new ArrayList<>(List.of(command));
        Object object = FastStart.newCommand(command);
        List<String> positionals = new ArrayList<>();
        for (FastStart.Arg arg : FastStart.table().get(command)) {
            if (arg.kind() == FastStart.Kind.POSITIONAL) {
                positionals.addAll(command.equals("stdio") ? List.of("--", "node", "--inspect", "s.js") : List.of("a.ndjson", "b.ndjson"));
                continue;
            }
            if (arg.kind() != FastStart.Kind.OPTION || arg.arity().equals("0..1")) {
                continue;
            }
            String name = arg.names().get(arg.names().size() - 1);
            Field field = field(object, arg.path());
            Class<?> type = field.getType();
            if (!arg.takesValue()) {
                line.add(name);
            } else if (type == List.class) {
                boolean paths = ((ParameterizedType) field.getGenericType()).getActualTypeArguments()[0] == Path.class;
                line.addAll(List.of(name, paths ? "/tmp/one" : "one", name + "=" + (paths ? "/tmp/two" : "two")));
            } else if (type == Map.class) {
                line.addAll(List.of(name, "A=1", name, "B=x=y"));
            } else if (type == Long.class || type == long.class || type == Integer.class || type == int.class) {
                line.addAll(List.of(name, "12"));
            } else if (type == Path.class) {
                line.add(name + "=/tmp/" + field.getName());
            } else {
                line.addAll(List.of(name, "v-" + field.getName()));
            }
        }
        line.addAll(positionals);
        return line;
    }

    private static Field field(Object owner, List<String> path) {
        try {
            for (int i = 0; i < path.size() - 1; i++) {
                Field f = owner.getClass().getDeclaredField(path.get(i));
                f.setAccessible(true);
                owner = f.get(owner);
            }
            Field f = owner.getClass().getDeclaredField(path.get(path.size() - 1));
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(path + ": " + e, e);
        }
    }

    /** Every instance field, into the option objects the commands hold, but picocli's spec and the streams. */
    private static void assertSameFields(Object expected, Object actual, String where) {
        assertEquals(expected.getClass(), actual.getClass(), where);
        int compared = 0;
        for (Field field : expected.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) || field.getName().equals("spec")
                    || InputStream.class.isAssignableFrom(field.getType())
                    || OutputStream.class.isAssignableFrom(field.getType())) {
                continue;
            }
            field.setAccessible(true);
            try {
                Object e = field.get(expected);
                Object a = field.get(actual);
                String at = where + " " + expected.getClass().getSimpleName() + "." + field.getName();
                if (e != null && field.getType().getPackageName().equals(FastStart.class.getPackageName())
                        && !field.getType().isEnum()) {
                    assertSameFields(e, a, at);
                } else if (e instanceof Map<?, ?> map) {
                    assertEquals(new ArrayList<>(map.entrySet()), new ArrayList<>(((Map<?, ?>) a).entrySet()), at);
                } else {
                    assertEquals(e, a, at);
                }
                compared++;
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
        assertFalse(compared == 0 && expected.getClass().getDeclaredFields().length > 1, where + ": nothing compared");
    }
}
