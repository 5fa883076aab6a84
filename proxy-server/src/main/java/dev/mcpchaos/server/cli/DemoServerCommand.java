package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.demo.DemoServer;
import picocli.CommandLine.Command;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.util.concurrent.Callable;

/** {@code mcp-chaos demo-server}: the built-in MCP server over stdio. */
@Command(name = "demo-server",
        mixinStandardHelpOptions = true,
        description = {"Run the built-in MCP server over stdio: tools echo, add, slow (with progress) and large.",
            "The demo, the docs and the tests put the proxy in front of it."})
final class DemoServerCommand implements Callable<Integer> {

    @Override
    public Integer call() throws Exception {
        FileOutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        return DemoServer.serve(new FileInputStream(FileDescriptor.in), protocolOut);
    }
}
