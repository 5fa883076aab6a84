/** Helpers of the rules module (JSON edits, JSON Patch, formatting). Not API. */
package dev.mcpchaos.rules.internal;
