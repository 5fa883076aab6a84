package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import dev.mcpchaos.rules.journal.MessagePattern;
import dev.mcpchaos.rules.journal.Messages;
import dev.mcpchaos.server.cli.ControlClient.ControlException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code mcp-chaos journal}: a running proxy's journal ({@code GET /journal} of its control API),
 * one line per message as assertion failures show it, filtered with the patterns of
 * {@link Messages}: the same words, so that what a test asserts can be looked at by hand. Lines
 * go to stdout; a note that older entries were dropped for capacity, and each refusal, to stderr.
 * Exit codes: 0 done (also when nothing matched), 1 refused by the proxy or no answer from it, 2 a
 * command line picocli cannot use.
 */
@Command(name = "journal",
        mixinStandardHelpOptions = true,
        description = {"Print a running proxy's journal (GET /journal of its control API), one line per message: "
                + "which way it went, what it was, which rule did what to it, and whether it was delivered.",
            "The filters are the journal's patterns (docs/journal.md); given together, an entry must pass all. "
                    + "The proxy must keep a journal (mcp-chaos http|stdio --journal N)."},
        footer = {"", "Examples:",
            "  mcp-chaos journal",
            "  mcp-chaos journal --direction c2s --not-delivered  # never reached the server",
            "  mcp-chaos journal --tool 'write*' --duplicate-writes",
            "  mcp-chaos journal --faulted lose-answer --json",
            "", "Exit codes: 0 done, 1 refused by the proxy or no answer from it, 2 usage."})
final class JournalCommand implements Callable<Integer> {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** --control and --token. */
    @CommandLine.Mixin
    ControlClientOptions proxy = new ControlClientOptions();

    @Option(names = "--since", paramLabel = "N", defaultValue = "0",
            description = "Only entries numbered above N. Default: ${DEFAULT-VALUE} (all held).")
    long since;

    @Option(names = "--direction", paramLabel = "DIRECTION",
            description = "client_to_server (c2s) or server_to_client (s2c).")
    String direction;

    @Option(names = "--kind", paramLabel = "KIND",
            description = "request, response, notification, error, batch, other or malformed.")
    String kind;

    @Option(names = "--method", paramLabel = "GLOB",
            description = "Messages of this method (a glob), and answers to its requests: Messages.method.")
    String method;

    @Option(names = "--tool", paramLabel = "GLOB",
            description = "tools/call of this tool (a glob), and answers to them: Messages.toolCall.")
    String tool;

    @Option(names = "--session", paramLabel = "ID", description = "Only this session's messages.")
    String session;

    @Option(names = "--delivered", description = "Only messages that left the proxy towards their destination "
            + "(with --direction c2s: that reached the server).")
    boolean delivered;

    @Option(names = "--not-delivered", description = "Only messages that did not (with --direction c2s: that never "
            + "reached the server; s2c: that never reached the client).")
    boolean notDelivered;

    @Option(names = "--faulted", paramLabel = "FAULT|RULE", arity = "0..1", fallbackValue = "",
            description = "Only messages a rule acted on; with a value, a rule of that fault type or name.")
    String faulted;

    @Option(names = "--dropped", description = "Only messages a rule acted on that never left the proxy: "
            + "Messages.dropped.")
    boolean dropped;

    @Option(names = "--same-arguments-as", paramLabel = "N",
            description = "Only requests that asked what request #N asked (idempotency keys aside): "
                    + "Messages.sameArgumentsAs.")
    Long sameArgumentsAs;

    @Option(names = "--duplicate-writes", description = "Of the client's requests that pass the other filters, only "
            + "its duplicate writes: the later copy of a write the server received twice, or of one resent after it "
            + "reached the server (client().duplicateWrites). A safe retry is none.")
    boolean duplicateWrites;

    @Option(names = "--json", description = "Print the journal as GET /journal gives it (with filters: only the "
            + "entries that pass, in the same form).")
    boolean json;

    @Override
    public Integer call() {
        if (since < 0) {
            throw usage("--since: " + since + " (expected: a whole number >= 0)");
        }
        if (delivered && notDelivered) {
            throw usage("--delivered and --not-delivered: only one of them");
        }
        MessagePattern filter = pattern();
        return proxy.act(out(), err(), client -> {
            String path = "/journal?since=" + since;
            String body = client.get(path);
            JournalSnapshot journal;
            try {
                journal = JournalJson.read(body);
            } catch (IllegalArgumentException e) {
                throw new ControlException("GET " + client.base() + path + ": the answer is not a journal ("
                        + e.getMessage() + "; is --control pointing at mcp-chaos?)");
            }
            List<JournalEntry> kept = select(journal, filter);
            if (json) {
                out().println(filter == null ? body.strip() : JournalJson.write(
                        new JournalSnapshot(kept, journal.capacity(), journal.evicted(), journal.next())));
            } else {
                kept.forEach(out()::println);
            }
            if (journal.evicted() > 0) {
                err().println("mcp-chaos: note: " + journal.evicted() + " older entries were dropped for capacity "
                        + journal.capacity() + " (the journal keeps the newest; mcp-chaos http|stdio --journal N "
                        + "keeps more)");
            }
            return 0;
        });
    }

    /** The entries of {@code journal} that pass the filters, oldest first. */
    private List<JournalEntry> select(JournalSnapshot journal, MessagePattern filter) {
        MessagePattern all = filter == null ? Messages.any() : filter;
        if (sameArgumentsAs != null) {
            JournalEntry request = journal.entries().stream().filter(e -> e.sequence() == sameArgumentsAs)
                    .findFirst().orElseThrow(() -> new ControlException("--same-arguments-as: #" + sameArgumentsAs
                            + " is not in the journal (it holds " + held(journal) + ")"));
            try {
                all = all.and(Messages.sameArgumentsAs(request));
            } catch (IllegalArgumentException e) {
                throw new ControlException("--same-arguments-as: #" + sameArgumentsAs + " is no request with params ("
                        + request + ")");
            }
        }
        if (duplicateWrites) {
            return journal.verify().client().duplicateWrites(all).entries();
        }
        return journal.filter(all);
    }

    /** The filters as one pattern, or null when none was given (the journal is printed as it came). */
    private MessagePattern pattern() {
        MessagePattern all = Messages.any();
        boolean any = false;
        if (direction != null) {
            Direction d = direction(direction);
            all = all.and(new MessagePattern(d.arrow(), e -> e.direction() == d));
            any = true;
        }
        if (kind != null) {
            MessageKind k;
            try {
                k = MessageKind.valueOf(kind.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw usage("--kind: '" + kind + "' (expected: request, response, notification, error, batch, "
                        + "other or malformed)");
            }
            all = all.and(Messages.kind(k));
            any = true;
        }
        if (method != null) {
            all = all.and(Messages.method(method));
            any = true;
        }
        if (tool != null) {
            all = all.and(Messages.toolCall(tool));
            any = true;
        }
        if (session != null) {
            all = all.inSession(session);
            any = true;
        }
        if (delivered || notDelivered) {
            all = delivered ? Messages.delivered(all) : Messages.notDelivered(all);
            any = true;
        }
        if (dropped) {
            all = Messages.dropped(all);
            any = true;
        }
        if (faulted != null) {
            MessagePattern before = all;
            all = faulted.isEmpty() ? new MessagePattern(before.description() + " a rule acted on",
                    e -> before.test(e) && !e.faults().isEmpty()) : Messages.faulted(faulted, before);
            any = true;
        }
        return any || sameArgumentsAs != null || duplicateWrites ? all : null;
    }

    private Direction direction(String text) {
        switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "client_to_server":
            case "c2s":
            case "c->s":
                return Direction.CLIENT_TO_SERVER;
            case "server_to_client":
            case "s2c":
            case "s->c":
                return Direction.SERVER_TO_CLIENT;
            default:
                throw usage("--direction: '" + text + "' (expected: client_to_server, server_to_client, c2s or s2c)");
        }
    }

    private static String held(JournalSnapshot journal) {
        List<JournalEntry> entries = journal.entries();
        return entries.isEmpty() ? "no entries" : "#" + entries.get(0).sequence() + "..#"
                + entries.get(entries.size() - 1).sequence();
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    private PrintWriter err() {
        return spec.commandLine().getErr();
    }
}
