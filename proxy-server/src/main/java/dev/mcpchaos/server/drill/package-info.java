/**
 * {@code mcp-chaos drill}: how resilient is an MCP client? A catalogue of {@link
 * dev.mcpchaos.server.drill.Scenario scenarios} (each a fault profile, what a resilient client
 * does, the protocol rule it comes from, how it is graded), and a {@link
 * dev.mcpchaos.server.drill.Drill runner} that runs a client command once per scenario against
 * the demo server behind a proxy and grades it from the journal into a {@link
 * dev.mcpchaos.server.drill.Scorecard}. See docs/drill.md.
 */
package dev.mcpchaos.server.drill;
