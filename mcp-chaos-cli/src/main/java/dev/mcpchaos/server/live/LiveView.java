package dev.mcpchaos.server.live;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A block of lines at the bottom of a terminal, redrawn in place, with everything else that is
 * printed to the terminal printed above it.
 *
 * <p>Each frame moves the cursor back up by the height of the frame before ({@code CR},
 * {@code ESC[nA}), clears to the end of the screen ({@code ESC[J}) and prints the new block,
 * leaving the cursor at the start of the line below it. Text for the terminal goes through
 * {@link #logs()}: it is cut into whole lines (per writing thread, so that two threads' halves of
 * a line are not glued together), and each batch of whole lines is printed in place of the block,
 * which is printed again below them, in one write. A line without its newline waits for it (or
 * for {@link #close()}); one longer than {@value #MAX_PARTIAL} bytes is printed as it is.
 *
 * <p>All writes to the terminal happen under one lock, in one {@code write} call each. After
 * {@link #close()} the last block stays on screen, the cursor is on a fresh line below it, and
 * {@link #logs()} prints straight through.
 */
final class LiveView implements AutoCloseable {

    static final String ESC = "\u001b[";
    /** Clear from the cursor to the end of the screen. */
    static final String CLEAR = ESC + "J";
    /** Longest line kept waiting for its newline, in bytes. */
    static final int MAX_PARTIAL = 16 * 1024;
    /** Over what time the message rates are taken. */
    static final long RATE_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final OutputStream terminal;
    private final int width;
    private final LongSupplier nanoTime;
    private final LineSink logs = new LineSink();
    private final Object lock = new Object();

    // Guarded by lock.
    private Supplier<LiveSnapshot> source;
    private byte[] block = new byte[0];
    private int height;
    private boolean closed;
    private boolean failed;
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    /** Set by {@link #start}, stopped by {@link #close}, which may run on another thread. */
    private volatile ScheduledExecutorService timer;

    /** Cursor to column 1, then up {@code n} lines: back to the first line of the block. */
    static String up(int n) {
        return "\r" + ESC + n + "A";
    }

    /**
     * @param terminal where the view and the logs are printed (the real stderr)
     * @param width the terminal's width in columns
     * @param nanoTime the clock the message rates are taken on
     */
    LiveView(OutputStream terminal, int width, LongSupplier nanoTime) {
        this.terminal = Objects.requireNonNull(terminal, "terminal");
        this.width = width;
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    }

    /** What to print above the view: give it whatever would have gone to the terminal. Never closed by closing it. */
    OutputStream logs() {
        return logs;
    }

    /**
     * Draws the block now and then every {@code period}, on a daemon thread of its own, with the
     * numbers {@code source} gives.
     */
    void start(Supplier<LiveSnapshot> source, Duration period) {
        synchronized (lock) {
            if (closed || this.source != null) {
                throw new IllegalStateException("live view: " + (closed ? "closed" : "already started"));
            }
            this.source = Objects.requireNonNull(source, "source");
        }
        redraw();
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mcp-chaos-live-view");
            t.setDaemon(true);
            return t;
        });
        long nanos = period.toNanos();
        timer.scheduleWithFixedDelay(this::tick, nanos, nanos, TimeUnit.NANOSECONDS);
    }

    private void tick() {
        try {
            redraw();
        } catch (RuntimeException e) {
            // A frame that cannot be read must not end the proxy: stop drawing, say why once, above.
            synchronized (lock) {
                failed = true;
            }
            printAbove(("mcp-chaos: live view stopped: " + e + "\n").getBytes(StandardCharsets.UTF_8));
            timer.shutdown();
        }
    }

    /** Reads the numbers and draws the block in place of the one before. */
    void redraw() {
        synchronized (lock) {
            if (closed || failed || source == null) {
                return;
            }
            LiveSnapshot s = source.get();
            long now = nanoTime.getAsLong();
            samples.addLast(new long[] {now, s.toServer(), s.toClient()});
            // Keep one sample at or before the start of the window: the rate is taken from it.
            while (samples.size() > 2 && now - second()[0] >= RATE_WINDOW_NANOS) {
                samples.removeFirst();
            }
            long[] base = samples.peekFirst();
            double seconds = (now - base[0]) / 1e9;
            double toServer = seconds > 0 ? (s.toServer() - base[1]) / seconds : 0;
            double toClient = seconds > 0 ? (s.toClient() - base[2]) / seconds : 0;
            List<String> lines = LiveBlock.lines(s, toServer, toClient, width);
            StringBuilder text = new StringBuilder();
            for (String line : lines) {
                text.append(line).append('\n');
            }
            byte[] next = text.toString().getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream frame = new ByteArrayOutputStream(next.length + 16);
            frame.writeBytes(back());
            frame.writeBytes(next);
            block = next;
            height = lines.size();
            write(frame.toByteArray());
        }
    }

    private long[] second() {
        var it = samples.iterator();
        it.next();
        return it.next();
    }

    /** Prints whole lines (ending in a newline) above the block, and the block again below them. */
    void printAbove(byte[] lines) {
        synchronized (lock) {
            ByteArrayOutputStream frame = new ByteArrayOutputStream(lines.length + block.length + 16);
            frame.writeBytes(back());
            frame.writeBytes(lines);
            frame.writeBytes(block);
            write(frame.toByteArray());
        }
    }

    /** The escapes that take the cursor back to where the block starts and clear it; none when there is no block. */
    private byte[] back() {
        return height == 0 ? new byte[0] : (up(height) + CLEAR).getBytes(StandardCharsets.US_ASCII);
    }

    private void write(byte[] bytes) {
        try {
            terminal.write(bytes);
            terminal.flush();
        } catch (IOException e) {
            failed = true; // the terminal is gone: nothing else to tell it
        }
    }

    /**
     * Stops redrawing; prints what waited for a newline, then the block one last time with the
     * final numbers, and leaves the cursor on the line below it. Later text goes straight to the
     * terminal.
     */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
            try {
                timer.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (lock) {
            if (closed) {
                return;
            }
            logs.drain();
            try {
                redraw();
            } catch (RuntimeException e) {
                failed = true; // the numbers cannot be read: the block drawn last stays as it is
            }
            closed = true;
            height = 0; // the last block stays where it is: nothing above it is ever cleared again
            block = new byte[0];
        }
    }

    /** Cuts what is written into whole lines, per thread, and prints them above the block. */
    private final class LineSink extends OutputStream {
        private final Map<Thread, ByteArrayOutputStream> partial = new ConcurrentHashMap<>();

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            Thread thread = Thread.currentThread();
            int lastNewline = -1;
            for (int i = off + len - 1; i >= off; i--) {
                if (b[i] == '\n') {
                    lastNewline = i;
                    break;
                }
            }
            ByteArrayOutputStream waiting = partial.get(thread);
            if (lastNewline < 0) {
                if (waiting == null) {
                    waiting = new ByteArrayOutputStream();
                    partial.put(thread, waiting);
                }
                waiting.write(b, off, len);
                if (waiting.size() > MAX_PARTIAL) {
                    partial.remove(thread);
                    waiting.write('\n');
                    printAbove(waiting.toByteArray());
                }
                return;
            }
            byte[] lines;
            if (waiting == null) {
                lines = java.util.Arrays.copyOfRange(b, off, lastNewline + 1);
            } else {
                partial.remove(thread);
                waiting.write(b, off, lastNewline + 1 - off);
                lines = waiting.toByteArray();
            }
            int rest = off + len - (lastNewline + 1);
            if (rest > 0) {
                ByteArrayOutputStream next = new ByteArrayOutputStream();
                next.write(b, lastNewline + 1, rest);
                partial.put(thread, next);
            }
            printAbove(lines);
        }

        /**
         * Prints every line still waiting for its newline, with one. For {@link #close()}: by then the
         * proxy has stopped, so no thread is still adding to its piece.
         */
        void drain() {
            for (var it = partial.entrySet().iterator(); it.hasNext(); ) {
                ByteArrayOutputStream waiting = it.next().getValue();
                it.remove();
                waiting.write('\n');
                printAbove(waiting.toByteArray());
            }
        }
    }
}
