/**
 * Chaos rules: rule files ({@link dev.mcpchaos.rules.RuleSet}), and the
 * {@link dev.mcpchaos.rules.RuleEngine} that applies them to the traffic as a
 * {@link dev.mcpchaos.core.intercept.FrameInterceptor}, reporting each injected fault as a
 * {@link dev.mcpchaos.rules.FaultEvent}. The format and every fault are described in
 * {@code docs/rules.md}.
 */
package dev.mcpchaos.rules;
