/**
 * The journal: what passed through a proxy, message by message, and {@code verify} assertions on
 * it. The model lives here, apart from the proxy server, so that the embedded proxy, the control
 * API and the Testcontainers module share the same types. See {@code docs/journal.md}.
 */
package dev.mcpchaos.rules.journal;
