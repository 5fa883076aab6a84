/**
 * The fault catalogue: one class per fault, each declaring its own
 * {@link dev.mcpchaos.rules.fault.FaultType} (name, parameters, transports, factory) beside a
 * nested {@code Config} record that validates itself, and
 * {@link dev.mcpchaos.rules.fault.FaultRegistry}, the list of those types that rule files name.
 * The contract for fault authors is on {@link dev.mcpchaos.rules.fault.Fault}; the walk-through is
 * {@code docs/adding-a-fault.md}.
 */
package dev.mcpchaos.rules.fault;
