package dev.mcpchaos.bench.codec;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * Realistic MCP JSON-RPC messages for the codec benchmarks, built from a fixed seed so every run
 * sees the same bytes. Each is one line of JSON without a trailing newline.
 *
 * <ul>
 *   <li>{@code small}: a {@code tools/call} request of about 100 B (the size of most requests and
 *       notifications);</li>
 *   <li>{@code call1k} / {@code call64k}: a {@code tools/call} result whose text content is about
 *       1 KiB / 64 KiB of prose with escapes ({@code \n}, {@code \"}) and some non-ASCII;</li>
 *   <li>{@code toolsList}: a {@code tools/list} result of 20 tools with large input schemas
 *       (nested objects, enums, descriptions), about 30 KB.</li>
 * </ul>
 */
public final class McpMessages {

    /** The names accepted by {@link #of(String)}, in the order the benchmarks list them. */
    public static final String[] NAMES = {"small", "call1k", "call64k", "toolsList"};

    private static final String[] WORDS = {
        "the", "server", "returned", "results", "for", "query", "search", "document", "index",
        "chaos", "proxy", "latency", "résumé", "naïve", "café", "JSON-RPC", "message", "tool",
        "schema", "stream", "event", "session", "request", "response", "timeout", "retry",
        "\\\"quoted\\\"", "path/to/file.txt", "line\\nbreak", "tab\\tseparated", "über", "数据",
    };

    private McpMessages() {
    }

    /** The message called {@code name} (see {@link #NAMES}), UTF-8. */
    public static byte[] of(String name) {
        switch (name) {
            case "small":
                return small();
            case "call1k":
                return callResult(1024, 1);
            case "call64k":
                return callResult(64 * 1024, 2);
            case "toolsList":
                return toolsList();
            default:
                throw new IllegalArgumentException("message: " + name + " (expected one of small, call1k, call64k, toolsList)");
        }
    }

    static byte[] small() {
        return utf8("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":"
                + "{\"name\":\"search_docs\",\"arguments\":{\"query\":\"netty\"}}}");
    }

    /** A tools/call result with one text content of about {@code textBytes} bytes of JSON string. */
    static byte[] callResult(int textBytes, long seed) {
        Random random = new Random(seed);
        StringBuilder text = new StringBuilder(textBytes + 64);
        int length = 0;
        while (length < textBytes) {
            String word = WORDS[random.nextInt(WORDS.length)];
            String gap = random.nextInt(12) == 0 ? "\\n" : " ";
            text.append(word).append(gap);
            length += utf8Length(word) + gap.length();
        }
        return utf8("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
                + text + "\"}],\"isError\":false}}");
    }

    /** A tools/list result: 20 tools, each with an input schema of 7 properties, about 30 KB. */
    static byte[] toolsList() {
        Random random = new Random(3);
        StringBuilder b = new StringBuilder(32 * 1024);
        b.append("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[");
        for (int t = 0; t < 20; t++) {
            if (t > 0) {
                b.append(',');
            }
            b.append("{\"name\":\"tool_").append(t).append("_").append(WORDS[random.nextInt(10)])
                    .append("\",\"title\":\"Tool number ").append(t)
                    .append("\",\"description\":\"").append(sentence(random, 25)).append("\",")
                    .append("\"inputSchema\":{\"type\":\"object\",\"properties\":{");
            for (int p = 0; p < 7; p++) {
                if (p > 0) {
                    b.append(',');
                }
                b.append("\"param_").append(p).append("\":{");
                switch (p % 4) {
                    case 0:
                        b.append("\"type\":\"string\",\"minLength\":1,\"maxLength\":256");
                        break;
                    case 1:
                        b.append("\"type\":\"integer\",\"minimum\":0,\"maximum\":1000,\"default\":10");
                        break;
                    case 2:
                        b.append("\"type\":\"string\",\"enum\":[\"fast\",\"balanced\",\"thorough\",\"exhaustive\"]");
                        break;
                    default:
                        b.append("\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"},"
                                + "\"values\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}}},"
                                + "\"required\":[\"key\"]");
                        break;
                }
                b.append(",\"description\":\"").append(sentence(random, 8)).append("\"}");
            }
            b.append("},\"required\":[\"param_0\",\"param_2\"],\"additionalProperties\":false},")
                    .append("\"annotations\":{\"readOnlyHint\":").append(t % 2 == 0)
                    .append(",\"openWorldHint\":false}}");
        }
        b.append("],\"nextCursor\":\"eyJwYWdlIjoyfQ==\"}}");
        return utf8(b.toString());
    }

    private static String sentence(Random random, int words) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < words; i++) {
            if (i > 0) {
                s.append(' ');
            }
            s.append(WORDS[random.nextInt(WORDS.length)]);
        }
        return s.toString();
    }

    private static int utf8Length(CharSequence s) {
        return s.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Prints each message's size, and the message itself with {@code --print NAME}. */
    public static void main(String[] args) {
        if (args.length == 2 && args[0].equals("--print")) {
            System.out.println(new String(of(args[1]), StandardCharsets.UTF_8));
            return;
        }
        for (String name : NAMES) {
            System.out.println(name + " " + of(name).length);
        }
    }
}
