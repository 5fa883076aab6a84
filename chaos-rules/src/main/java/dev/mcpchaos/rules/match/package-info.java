/** Which messages a rule picks: {@link dev.mcpchaos.rules.match.MessageMatch} and its globs. */
package dev.mcpchaos.rules.match;
