package dev.mcpchaos.server.record;

import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** docs/cassette-line.schema.json, loaded from the repository, to check lines a test wrote. */
public final class CassetteLineSchema {

    private static final Schema SCHEMA = load();

    private CassetteLineSchema() {
    }

    private static Schema load() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path file = dir.resolve("docs").resolve("cassette-line.schema.json");
            if (Files.isRegularFile(file)) {
                try {
                    return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                            .getSchema(Files.readString(file), InputFormat.JSON);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("docs/cassette-line.schema.json not found above " + Path.of("").toAbsolutePath());
    }

    /** What is wrong with {@code line}; empty when it is a valid cassette line. */
    public static List<String> errors(String line) {
        return SCHEMA.validate(line, InputFormat.JSON).stream().map(Error::toString).toList();
    }
}
