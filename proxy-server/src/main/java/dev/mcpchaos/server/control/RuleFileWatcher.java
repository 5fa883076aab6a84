package dev.mcpchaos.server.control;

import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.events.EventLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Reloads a rule file when it changes: a valid edit replaces the engine's rules at once (rules
 * that did not change keep their counters); an edit that is not valid is logged with the reason
 * and the rules in force stay.
 *
 * <p>Watches the file's directory, not the file, and compares contents, because editors save by
 * writing a new file and renaming it, and Kubernetes updates a mounted ConfigMap by swapping a
 * symbolic link: neither touches the file the proxy opened. Events come in bursts (truncate, write,
 * rename), so a reload waits until the directory has been quiet for {@link #SETTLE_MILLIS}.
 */
public final class RuleFileWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RuleFileWatcher.class);

    /** How long the directory must be quiet before the file is read again. */
    static final long SETTLE_MILLIS = 150;

    private final Path file;
    private final RuleEngine engine;
    private final EventLog events;
    private final WatchService watcher;
    private final Thread thread;
    private byte[] loaded;

    private RuleFileWatcher(Path file, RuleEngine engine, EventLog events, WatchService watcher, byte[] loaded) {
        this.file = file;
        this.engine = engine;
        this.events = events;
        this.watcher = watcher;
        this.loaded = loaded;
        this.thread = new Thread(this::run, "mcp-chaos-rules-watcher");
        this.thread.setDaemon(true);
    }

    /**
     * Starts watching {@code file}, whose rules {@code engine} applies now.
     *
     * @param events told about refused edits (changes themselves reach it as the engine's listener); may be null
     * @throws IOException when the file's directory cannot be watched
     */
    public static RuleFileWatcher start(Path file, RuleEngine engine, EventLog events) throws IOException {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(engine, "engine");
        Path absolute = file.toAbsolutePath();
        WatchService watcher = absolute.getFileSystem().newWatchService();
        try {
            absolute.getParent().register(watcher, StandardWatchEventKinds.ENTRY_CREATE,
                    StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE);
        } catch (IOException e) {
            watcher.close();
            throw new IOException("cannot watch " + file + " for changes: " + e.getMessage(), e);
        }
        RuleFileWatcher w = new RuleFileWatcher(file, engine, events, watcher, read(file));
        w.thread.start();
        log.info("watching {} for changes", file);
        return w;
    }

    private void run() {
        try {
            while (true) {
                WatchKey key = watcher.take();
                drain(key);
                // Settle: keep taking events until the directory has been quiet for a while.
                while ((key = watcher.poll(SETTLE_MILLIS, TimeUnit.MILLISECONDS)) != null) {
                    drain(key);
                }
                reload();
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closed: stop
        }
    }

    private static void drain(WatchKey key) {
        key.pollEvents();
        key.reset();
    }

    private void reload() {
        byte[] now = read(file);
        if (now == null) {
            // Between an editor's delete and its rename, or removed: keep the rules until it is back.
            log.debug("{} is not there now; the rules in force stay", file);
            return;
        }
        if (Arrays.equals(now, loaded)) {
            return; // touched, or another file in the directory changed
        }
        loaded = now;
        String cause = file + " changed";
        try {
            engine.replace(RuleSet.parse(new String(now, StandardCharsets.UTF_8), file.toString()), cause);
        } catch (RuleFileException e) {
            log.warn("{} was not reloaded, the rules in force stay: {}", file, e.getMessage());
            if (events != null) {
                events.rulesRefused(cause, e.getMessage());
            }
        }
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            return null;
        }
    }

    /** Stops watching. */
    @Override
    public void close() {
        try {
            watcher.close();
        } catch (IOException e) {
            log.debug("closing the watch service failed: {}", e.toString());
        }
        thread.interrupt();
    }
}
