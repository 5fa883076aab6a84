/** Rules, matchers and faults. */
package dev.mcpchaos.rules;
