package dev.mcpchaos.bench.stdio;

import java.io.FileInputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The receiving end of a stdio throughput run: reads its stdin to the end and reports how many
 * bytes came, the CRC-32C of them all (so the run can be checked against the input
 * without a copy on disk), and the seconds from the first byte to the end of the input. Timing
 * from the first byte leaves out every start-up before it (the proxy's JVM, the server's), so
 * the rate is that of the relay while it runs.
 *
 * <p>Usage: {@code TimedSink [--report FILE]} (the report goes to stdout without it; with it, to
 * FILE, for when the sink is an MCP server whose stdout belongs to the protocol);
 * {@code TimedSink --crc FILE} prints the CRC-32C of a file, to compare with.
 * Report line: {@code bytes=B seconds=S crc32c=HEX}. It does no more per byte than the CRC (an
 * intrinsic), so that it is never the slowest part of the pipe it measures.
 */
public final class TimedSink {

    private TimedSink() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 2 && args[0].equals("--crc")) {
            CRC32C crc = new CRC32C();
            try (InputStream in = Files.newInputStream(Path.of(args[1]))) {
                byte[] buffer = new byte[1 << 20];
                for (int n; (n = in.read(buffer)) > 0; ) {
                    crc.update(buffer, 0, n);
                }
            }
            System.out.printf("crc32c=%08x%n", crc.getValue());
            return;
        }
        Path report = args.length == 2 && args[0].equals("--report") ? Path.of(args[1]) : null;
        if (args.length != 0 && report == null) {
            System.err.println("usage: TimedSink [--report FILE] | TimedSink --crc FILE");
            System.exit(2);
        }
        byte[] buffer = new byte[1 << 20];
        CRC32C crc = new CRC32C();
        long bytes = 0;
        long first = 0;
        try (InputStream in = new FileInputStream(FileDescriptor.in)) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (bytes == 0) {
                    first = System.nanoTime();
                }
                bytes += n;
                crc.update(buffer, 0, n);
            }
        }
        long end = System.nanoTime();
        String line = String.format("bytes=%d seconds=%.6f crc32c=%08x%n", bytes,
                bytes == 0 ? 0.0 : (end - first) / 1e9, crc.getValue());
        if (report == null) {
            System.out.print(line);
        } else {
            Files.writeString(report, line, StandardCharsets.UTF_8);
        }
        try (PrintStream ignored = System.out) {
            // flushes and closes stdout before the JVM exits
        }
    }
}
