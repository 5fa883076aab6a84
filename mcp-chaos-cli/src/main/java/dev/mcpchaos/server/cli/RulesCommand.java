package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.cli.ControlClient.ControlException;
import dev.mcpchaos.server.control.ControlServer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ScopeType;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code mcp-chaos rules ...}: see and change the rules of a running proxy through its control API,
 * in the manner of {@code toxiproxy-cli}. Output for people goes to stdout, each refusal to stderr
 * as {@code mcp-chaos: } and the proxy's own message. Exit codes: 0 done, 1 refused by the proxy
 * or no answer from it, 2 a command line picocli cannot use.
 */
@Command(name = "rules",
        scope = ScopeType.INHERIT, // -h and -V on every subcommand
        mixinStandardHelpOptions = true,
        description = {"See and change the rules of a running proxy, through its control API "
                + "(mcp-chaos http serves it on 127.0.0.1:9090 by default; mcp-chaos stdio with --control HOST:PORT).",
            "Changes apply atomically to the next message; a change the proxy refuses leaves its rules as they were."},
        footer = {"", "Examples:",
            "  mcp-chaos rules list",
            "  mcp-chaos rules add slow-search.yaml --control 127.0.0.1:9091",
            "  mcp-chaos rules set slow-search probability=0.5 fault.latency=3s",
            "  mcp-chaos rules off          # the panic switch: no faults until 'rules on'",
            "  mcp-chaos rules events --follow --for 5m",
            "", "Exit codes: 0 done, 1 refused by the proxy or no answer from it, 2 usage."})
final class RulesCommand implements Runnable {

    /** How often {@code events --follow} asks for new events: quick enough to watch, cheap for the proxy. */
    private static final Duration FOLLOW_INTERVAL = Duration.ofMillis(500);

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** --control and --token, inherited by the subcommands. */
    @CommandLine.Mixin
    ControlClientOptions proxy = new ControlClientOptions();

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is needed: list, add, rm, enable, "
                + "disable, set, replace, off, on, status or events");
    }

    @Command(name = "list", description = "The rules in force: name, on or off, fault, match, when it fires, "
            + "and how often it matched and injected.")
    int list(@Option(names = "--json", description = "Print GET /rules as it comes: the rules as written.") boolean json) {
        return act(client -> {
            String rules = client.get("/rules");
            if (json) {
                out().println(rules);
                return 0;
            }
            JsonNode status = client.getJson("/status");
            Map<String, JsonNode> counters = new HashMap<>();
            status.path("rules").forEach(rule -> counters.put(rule.path("name").asText(), rule));
            if (!status.path("faults_enabled").asBoolean(true)) {
                out().println("faults are OFF (the panic switch): no rule injects anything until 'mcp-chaos rules on'");
            }
            JsonNode list = client.json("GET", "/rules", rules).path("rules");
            if (list.isEmpty()) {
                out().println("no rules (add one with: mcp-chaos rules add FILE)");
                return 0;
            }
            List<String[]> table = new ArrayList<>();
            table.add(new String[] {"NAME", "ENABLED", "FAULT", "MATCH", "WHEN", "MATCHED", "INJECTED"});
            for (JsonNode rule : list) {
                String name = rule.path("name").asText();
                JsonNode count = counters.get(name);
                table.add(new String[] {name, rule.path("enabled").asBoolean(true) ? "yes" : "no",
                        rule.path("fault").path("type").asText("?"), matchSummary(rule), whenSummary(rule),
                        count == null ? "-" : count.path("matched").asText(),
                        count == null ? "-" : count.path("injected").asText()});
            }
            printTable(table);
            return 0;
        });
    }

    @Command(name = "add", description = {"Add one rule (YAML or JSON, as one entry of a rule file's list).",
        "A whole rule file (with a top-level rules: list) adds each of its rules in turn, and stops at the first "
                + "the proxy refuses, saying which were added. Its seed, if any, is ignored: a running proxy keeps its own."})
    int add(@Parameters(paramLabel = "FILE|-", description = "The rule, or a rule file; '-' reads stdin.") String file) {
        return act(client -> {
            String text = read(file);
            JsonNode root = yamlOrNull(text);
            if (root == null || !root.isObject() || !root.has("rules")) {
                // One rule: the proxy checks it and names what is wrong.
                out().println(added(client.json("POST", "/rules", client.send("POST", "/rules", text, "application/yaml"))));
                return 0;
            }
            try {
                RuleSet.parse(text, file.equals("-") ? "stdin" : file); // the whole file is valid, or nothing is sent
            } catch (RuleFileException e) {
                throw new ControlException(e.getMessage());
            }
            noteSeed(root, file);
            List<String> names = new ArrayList<>();
            root.path("rules").forEach(rule -> names.add(rule.path("name").asText()));
            if (names.isEmpty()) {
                out().println("nothing to add: " + file + " has no rules");
                return 0;
            }
            for (int i = 0; i < names.size(); i++) {
                try {
                    String answer = client.send("POST", "/rules", root.path("rules").get(i).toString(),
                            "application/json");
                    out().println(added(client.json("POST", "/rules", answer)));
                } catch (ControlException e) {
                    err().println("mcp-chaos: " + e.getMessage());
                    err().println("mcp-chaos: stopped at rule '" + names.get(i) + "' (" + (i + 1) + " of " + names.size()
                            + "); added: " + join(names.subList(0, i)) + "; not sent: " + join(names.subList(i + 1, names.size())));
                    return 1;
                }
            }
            return 0;
        });
    }

    @Command(name = "rm", aliases = "remove", description = "Remove rules, in turn; stops at the first the proxy refuses.")
    int rm(@Parameters(paramLabel = "NAME", arity = "1..*") List<String> names) {
        return each(names, (client, name) -> {
            client.send("DELETE", "/rules/" + ControlClient.segment(name), null, null);
            return "removed rule '" + name + "'";
        });
    }

    @Command(name = "enable", description = "Switch rules on, in turn; stops at the first the proxy refuses.")
    int enable(@Parameters(paramLabel = "NAME", arity = "1..*") List<String> names) {
        return each(names, (client, name) -> {
            client.send("PATCH", "/rules/" + ControlClient.segment(name), "{\"enabled\":true}", "application/json");
            return "enabled rule '" + name + "'";
        });
    }

    @Command(name = "disable", description = "Switch rules off, in turn; stops at the first the proxy refuses. "
            + "A disabled rule keeps its place; like any changed rule, it counts afresh when switched on again.")
    int disable(@Parameters(paramLabel = "NAME", arity = "1..*") List<String> names) {
        return each(names, (client, name) -> {
            client.send("PATCH", "/rules/" + ControlClient.segment(name), "{\"enabled\":false}", "application/json");
            return "disabled rule '" + name + "'";
        });
    }

    @Command(name = "set", description = {"Change keys of one rule (a merge patch, RFC 7386), and print the rule as it "
            + "now is. Values are YAML: numbers, true/false and null (which removes the key) are typed, the rest is text.",
        "A dotted key changes one key inside match or fault, such as match.tool=search*"})
    int set(@Parameters(index = "0", paramLabel = "NAME", description = "The rule's name.") String name,
            @Parameters(index = "1..*", arity = "1..*", paramLabel = "KEY=VALUE",
                    description = "Such as probability=0.2, times=3, duration=30s, times=null, fault.latency=2s.")
            List<String> pairs) {
        ObjectNode patch = patchOf(pairs);
        return act(client -> {
            String path = "/rules/" + ControlClient.segment(name);
            JsonNode rule = client.json("PATCH", path, client.send("PATCH", path, patch.toString(), "application/json"));
            out().println("changed rule '" + name + "': " + rule);
            return 0;
        });
    }

    @Command(name = "replace", description = {"Replace every rule with those of a rule file (PUT /rules): all of "
            + "them or, when the proxy refuses the file, none.",
        "Counters start afresh for the new rules. The file's seed, if any, is ignored: a running proxy keeps its own."})
    int replace(@Parameters(paramLabel = "FILE|-", description = "The rule file; '-' reads stdin.") String file) {
        return act(client -> {
            String text = read(file);
            JsonNode root = yamlOrNull(text);
            if (root != null) {
                noteSeed(root, file);
            }
            JsonNode now = client.json("PUT", "/rules", client.send("PUT", "/rules", text, "application/yaml"));
            List<String> names = new ArrayList<>();
            now.path("rules").forEach(rule -> names.add(rule.path("name").asText()));
            out().println("replaced the rules: " + names.size() + " in force" + (names.isEmpty() ? "" : ": "
                    + String.join(", ", names)));
            return 0;
        });
    }

    @Command(name = "off", description = "The panic switch: no rule injects anything until 'rules on'. "
            + "The rules stay as they are.")
    int off() {
        return act(client -> {
            JsonNode answer = client.json("POST", "/faults/disable", client.send("POST", "/faults/disable", "", null));
            out().println(answer.path("changed").asBoolean() ? "faults off: no rule injects anything until "
                    + "'mcp-chaos rules on'" : "faults were already off");
            return 0;
        });
    }

    @Command(name = "on", description = "Undo 'rules off': the enabled rules inject again.")
    int on() {
        return act(client -> {
            JsonNode answer = client.json("POST", "/faults/enable", client.send("POST", "/faults/enable", "", null));
            out().println(answer.path("changed").asBoolean() ? "faults on" : "faults were already on");
            return 0;
        });
    }

    @Command(name = "status", description = "The proxy at a glance: transport, seed, uptime, faults on or off, "
            + "sessions, messages, faults injected.")
    int status(@Option(names = "--json", description = "Print GET /status as it comes.") boolean json) {
        return act(client -> {
            String body = client.get("/status");
            if (json) {
                out().println(body);
                return 0;
            }
            JsonNode s = client.json("GET", "/status", body);
            int enabled = 0;
            for (JsonNode rule : s.path("rules")) {
                enabled += rule.path("enabled").asBoolean(true) ? 1 : 0;
            }
            List<String[]> table = new ArrayList<>();
            table.add(new String[] {"control:", client.base().toString()});
            table.add(new String[] {"transport:", s.path("transport").asText()});
            table.add(new String[] {"seed:", s.path("seed").asText()});
            table.add(new String[] {"uptime:", uptime(s.path("uptime_seconds").asDouble())});
            table.add(new String[] {"faults:", s.path("faults_enabled").asBoolean(true) ? "on"
                    : "OFF (the panic switch; 'mcp-chaos rules on' turns them back on)"});
            table.add(new String[] {"sessions:", s.path("sessions_active").asText() + " active"});
            table.add(new String[] {"messages:", s.path("messages").path("client_to_server").asText()
                    + " client to server, " + s.path("messages").path("server_to_client").asText() + " server to client"});
            table.add(new String[] {"injected:", s.path("faults_injected").asText()});
            table.add(new String[] {"rules:", s.path("rules").size() + " (" + enabled + " enabled)"});
            printTable(table);
            return 0;
        });
    }

    @Command(name = "events", description = {"Recent events (faults, sessions, rule changes, errors), one JSON object "
            + "a line, as docs/events.md describes them.",
        "The proxy keeps the most recent ones only; when some were missed, stderr says how many."})
    int events(@Option(names = "--since", paramLabel = "N", defaultValue = "0",
                       description = "Only events after sequence number N. Default: ${DEFAULT-VALUE} (all kept).") long since,
               @Option(names = "--follow", description = "Keep printing new events (asking every 500 ms) until "
                       + "interrupted, or --for ends.") boolean follow,
               @Option(names = "--for", paramLabel = "DURATION",
                       description = "With --follow: stop after this long, such as 30s or 5m.") String forText) {
        if (since < 0) {
            throw usage("events", "--since: " + since + " (expected: a whole number >= 0)");
        }
        Duration limit = null;
        if (forText != null) {
            if (!follow) {
                throw usage("events", "--for: only with --follow");
            }
            try {
                limit = Units.parseDuration(forText);
            } catch (IllegalArgumentException e) {
                throw usage("events", "--for: '" + forText + "' (expected: a duration such as 30s or 5m)");
            }
        }
        Duration bound = limit;
        return act(client -> {
            long deadline = bound == null ? Long.MAX_VALUE : System.nanoTime() + bound.toNanos();
            long next = since;
            while (true) {
                next = printEvents(client, next);
                long left = deadline - System.nanoTime();
                if (!follow || left <= 0) {
                    return 0;
                }
                try {
                    Thread.sleep(Math.max(1, Math.min(FOLLOW_INTERVAL.toMillis(), left / 1_000_000)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return 0; // asked to stop: what was printed is the answer
                }
            }
        });
    }

    /** Prints every event after {@code since}, page by page; returns the last sequence number seen. */
    private long printEvents(ControlClient client, long since) {
        long next = since;
        while (true) {
            String path = "/events?since=" + next;
            JsonNode page = client.json("GET", path, client.get(path));
            if (page.path("missed").asLong() > 0) {
                err().println("mcp-chaos: " + page.path("missed").asLong() + " events after " + next
                        + " were missed: the proxy keeps the most recent ones only");
            }
            for (JsonNode event : page.path("events")) {
                out().println(event);
            }
            out().flush();
            long last = page.path("last").asLong(next);
            if (page.path("events").isEmpty() || last == next) {
                return last;
            }
            next = last;
        }
    }

    /** What one command does with the client; its exit code. */
    @FunctionalInterface
    interface Action {
        int run(ControlClient client);
    }

    /** What a command does with one name; the line to print. */
    @FunctionalInterface
    private interface NameAction {
        String run(ControlClient client, String name);
    }

    /** Runs {@code action}; a refusal or no answer is one line on stderr and exit code 1. */
    private int act(Action action) {
        return proxy.act(out(), err(), action);
    }

    /** Does {@code action} for each name in turn, and stops at the first refusal, saying what was done. */
    private int each(List<String> names, NameAction action) {
        return act(client -> {
            for (int i = 0; i < names.size(); i++) {
                try {
                    out().println(action.run(client, names.get(i)));
                } catch (ControlException e) {
                    err().println("mcp-chaos: " + e.getMessage());
                    if (names.size() > 1) {
                        err().println("mcp-chaos: stopped at '" + names.get(i) + "'; done: " + join(names.subList(0, i))
                                + "; not sent: " + join(names.subList(i + 1, names.size())));
                    }
                    return 1;
                }
            }
            return 0;
        });
    }

    private static String join(List<String> names) {
        return names.isEmpty() ? "none" : String.join(", ", names);
    }

    private static String added(JsonNode rule) {
        return "added rule '" + rule.path("name").asText() + "' (" + rule.path("fault").path("type").asText("?") + ")";
    }

    private void noteSeed(JsonNode root, String file) {
        if (root.isObject() && root.has("seed")) {
            err().println("mcp-chaos: note: the seed in " + file + " is ignored: a running proxy keeps its own "
                    + "('mcp-chaos rules status' shows it)");
        }
    }

    /** The text of {@code file}, or of stdin for {@code -}, up to the most the control API takes. */
    private static String read(String file) {
        byte[] bytes;
        try {
            if (file.equals("-")) {
                bytes = System.in.readNBytes(ControlServer.MAX_BODY_BYTES + 1); // stdin is the process's: not closed
            } else {
                try (InputStream in = Files.newInputStream(Path.of(file))) {
                    bytes = in.readNBytes(ControlServer.MAX_BODY_BYTES + 1);
                }
            }
        } catch (NoSuchFileException e) {
            throw new ControlException(file + ": no such file");
        } catch (IOException | RuntimeException e) {
            throw new ControlException(file + ": cannot be read (" + e.getMessage() + ")");
        }
        if (bytes.length > ControlServer.MAX_BODY_BYTES) {
            throw new ControlException(file + ": larger than " + ControlServer.MAX_BODY_BYTES
                    + " bytes (expected: at most what the control API takes)");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** {@code text} as YAML (JSON is YAML too), or null when it is not: the proxy will say why. */
    private static JsonNode yamlOrNull(String text) {
        try {
            return Yaml.MAPPER.readTree(text);
        } catch (IOException e) {
            return null;
        }
    }

    /** A merge patch from {@code KEY=VALUE} pairs; a dotted key reaches into match or fault. */
    private ObjectNode patchOf(List<String> pairs) {
        ObjectNode patch = ControlClient.JSON.createObjectNode();
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? "" : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            if (key.isEmpty() || value.isEmpty()) {
                throw usage("set", "KEY=VALUE: '" + pair + "' (expected: such as probability=0.2, times=3, "
                        + "fault.latency=2s, or times=null to remove a key)");
            }
            String[] path = key.split("\\.", -1);
            ObjectNode target = patch;
            for (int i = 0; i < path.length; i++) {
                if (path[i].isEmpty()) {
                    throw usage("set", "KEY=VALUE: '" + pair + "': key '" + key + "' (expected: names joined by dots, "
                            + "such as fault.latency)");
                }
                JsonNode there = target.get(path[i]);
                if (i == path.length - 1) {
                    if (there != null) {
                        throw usage("set", "KEY=VALUE: '" + pair + "': " + key + " is given twice");
                    }
                    target.set(path[i], scalar(value));
                } else if (there == null) {
                    target = target.putObject(path[i]);
                } else if (there.isObject()) {
                    target = (ObjectNode) there;
                } else {
                    throw usage("set", "KEY=VALUE: '" + pair + "': " + path[i] + " is given a value already");
                }
            }
        }
        return patch;
    }

    /**
     * {@code value} as a YAML scalar ({@code 0.2} a number, {@code true} a boolean, {@code null}
     * null, {@code 30s} text), or as a YAML flow collection when it starts with a bracket. Anything
     * else that YAML would read as structure ({@code a: b}) stays text, as the user most likely meant.
     */
    private JsonNode scalar(String value) {
        boolean flow = value.startsWith("{") || value.startsWith("[");
        try {
            JsonNode node = Yaml.MAPPER.readTree(value);
            if (node != null && !node.isMissingNode() && (flow || node.isValueNode())) {
                return node;
            }
        } catch (JsonProcessingException e) {
            if (flow) {
                throw usage("set", "'" + value + "': not valid YAML (" + e.getOriginalMessage() + ")");
            }
        }
        return TextNode.valueOf(value);
    }

    private CommandLine.ParameterException usage(String subcommand, String message) {
        return new CommandLine.ParameterException(spec.commandLine().getSubcommands().get(subcommand), message);
    }

    private static String matchSummary(JsonNode rule) {
        if (rule.path("built_in_code").asBoolean(false)) {
            return "(built in code)";
        }
        JsonNode match = rule.path("match");
        if (!match.isObject() || match.isEmpty()) {
            return "*";
        }
        List<String> parts = new ArrayList<>();
        match.fields().forEachRemaining(field -> parts.add(field.getKey() + "=" + text(field.getValue())));
        return String.join(" ", parts);
    }

    private static String whenSummary(JsonNode rule) {
        List<String> parts = new ArrayList<>();
        if (rule.has("probability")) {
            parts.add("p=" + text(rule.get("probability")));
        }
        if (rule.has("after") && !"0".equals(text(rule.get("after")))) {
            parts.add("after " + text(rule.get("after")));
        }
        if (rule.has("times")) {
            parts.add("times " + text(rule.get("times")));
        }
        if (rule.has("start") && !"0ms".equals(text(rule.get("start")))) {
            parts.add("from " + text(rule.get("start")));
        }
        if (rule.has("duration")) {
            parts.add("for " + text(rule.get("duration")));
        }
        return parts.isEmpty() ? "-" : String.join(" ", parts);
    }

    /** A value as a person would write it: text bare, a list comma-separated, a mapping as JSON. */
    private static String text(JsonNode value) {
        if (value.isValueNode()) {
            return value.asText();
        }
        if (value.isArray()) {
            List<String> items = new ArrayList<>();
            value.forEach(item -> items.add(text(item)));
            return String.join(",", items);
        }
        return value.toString();
    }

    private static String uptime(double seconds) {
        if (seconds < 60) {
            return String.format(Locale.ROOT, "%.1fs", seconds);
        }
        long s = (long) seconds;
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm %02ds", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%dh %02dm", s / 3600, s % 3600 / 60);
    }

    /** Prints rows in columns two spaces apart; the last column is not padded. */
    private void printTable(List<String[]> rows) {
        int columns = rows.get(0).length;
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int c = 0; c < columns; c++) {
                widths[c] = Math.max(widths[c], row[c].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < columns; c++) {
                line.append(row[c]);
                if (c < columns - 1) {
                    line.append(" ".repeat(widths[c] - row[c].length() + 2));
                }
            }
            out().println(line);
        }
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    private PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** Made on first use, not when picocli instantiates every subcommand at start (see DemoCommand.Json). */
    private static final class Yaml {
        static final ObjectMapper MAPPER = YAMLMapper.builder().build();
    }
}
