package dev.mcpchaos.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Writes {@link FastStart}'s table at build time, from picocli's model of the commands it takes,
 * so that each option stays declared once (by its annotation). One line per option or positional
 * parameter: command, kind, names, the path of fields from the command object to the one it
 * sets, arity, whether it takes several values, and its default ({@code =value}, or {@code -}).
 * An option picocli sets through a method, or in a way the table cannot say, is written as
 * {@code UNSUPPORTED}, and then {@link FastStart} leaves that command to picocli. Public only for the
 * build (exec:java); not API.
 *
 * <p>The table is written as a class, {@link FastStart#TABLE_CLASS}, whose one constant is its text,
 * not as a resource: a class comes from the class-data archive with the others, a resource from
 * the jar, which a plain stdio command line then opened before its server was started only for it.
 * The class file is written here directly (a dozen fields of the format; no compiler at build time).
 */
public final class FastStartTable {

    private FastStartTable() {
    }

    /** Writes the table as the class {@link FastStart#TABLE_CLASS} under the class directory {@code args[0]}. */
    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]).resolve(FastStart.TABLE_CLASS.replace('.', '/') + ".class");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.write(out, constantClass(FastStart.TABLE_CLASS, FastStart.TABLE_FIELD, table()));
    }

    /**
     * A class file (Java 17) of the final class {@code className} with one member: the constant
     * {@code static final String field = text}, package-private. No methods: nothing makes an instance of it.
     *
     * @throws java.io.UTFDataFormatException when {@code text} is over 65,535 bytes in the class file's UTF-8
     */
    static byte[] constantClass(String className, String field, String text) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0xCAFEBABE);
        out.writeShort(0); // minor version
        out.writeShort(61); // major version: Java 17
        // The constant pool, numbered from 1: the class and its superclass (each a name and a
        // class entry), the field's name and type, the attribute's name, and the text (a name and
        // a string entry). The count is one more than the entries.
        out.writeShort(10);
        utf8(out, className.replace('.', '/')); // #1
        out.writeByte(CONSTANT_CLASS);
        out.writeShort(1); // #2: this class
        utf8(out, "java/lang/Object"); // #3
        out.writeByte(CONSTANT_CLASS);
        out.writeShort(3); // #4: its superclass
        utf8(out, field); // #5
        utf8(out, "Ljava/lang/String;"); // #6
        utf8(out, "ConstantValue"); // #7
        utf8(out, text); // #8
        out.writeByte(CONSTANT_STRING);
        out.writeShort(8); // #9: the constant
        out.writeShort(ACC_FINAL | ACC_SUPER);
        out.writeShort(2); // this class
        out.writeShort(4); // superclass
        out.writeShort(0); // interfaces
        out.writeShort(1); // fields: one
        out.writeShort(ACC_STATIC | ACC_FINAL);
        out.writeShort(5); // name
        out.writeShort(6); // type
        out.writeShort(1); // its attributes: one, its ConstantValue
        out.writeShort(7);
        out.writeInt(2); // the attribute's length
        out.writeShort(9);
        out.writeShort(0); // methods
        out.writeShort(0); // the class's attributes
        out.flush();
        return bytes.toByteArray();
    }

    private static final int CONSTANT_UTF8 = 1;
    private static final int CONSTANT_CLASS = 7;
    private static final int CONSTANT_STRING = 8;
    private static final int ACC_STATIC = 0x0008;
    private static final int ACC_FINAL = 0x0010;
    private static final int ACC_SUPER = 0x0020;

    /** A CONSTANT_Utf8 entry: the class file's UTF-8 is DataOutput's (a length, then modified UTF-8). */
    private static void utf8(DataOutputStream out, String value) throws IOException {
        out.writeByte(CONSTANT_UTF8);
        out.writeUTF(value);
    }

    /** The table's text. */
    static String table() {
        StringBuilder text = new StringBuilder("# Generated at build time by FastStartTable from picocli's model; "
                + "read by FastStart. Do not edit.\n");
        for (String name : FastStart.COMMANDS) {
            Object command = FastStart.newCommand(name);
            CommandSpec spec = new CommandLine(command).getCommandSpec();
            Map<Object, String> paths = new IdentityHashMap<>();
            paths.put(command, "");
            mixinPaths(command, "", paths);
            for (ArgSpec arg : spec.args()) {
                text.append(line(name, arg, paths)).append('\n');
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
