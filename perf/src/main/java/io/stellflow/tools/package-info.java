/**
 * Command-line tools (topics, console producer and consumer) and the load generator ({@code
 * stellflow-perf produce|consume}). Tools write data to stdout and diagnostics to stderr.
 */
package io.stellflow.tools;
