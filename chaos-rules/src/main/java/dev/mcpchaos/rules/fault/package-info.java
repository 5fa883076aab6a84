/**
 * The fault catalogue: one class per fault, each with a nested {@code Config} record that
 * validates itself, and {@link dev.mcpchaos.rules.fault.FaultRegistry}, which names them for rule
 * files. The contract for fault authors is on {@link dev.mcpchaos.rules.fault.Fault}.
 */
package dev.mcpchaos.rules.fault;
