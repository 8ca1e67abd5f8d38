/** Stellflow perf module. */
package io.stellflow.perf;
