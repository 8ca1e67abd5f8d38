/**
 * Every command-line admin and console tool: topics, consumer groups, configs, leader election,
 * metadata quorum, cluster, console producer and consumer. They use the client and the controller's
 * client side only.
 * Tools write data to stdout and diagnostics to stderr.
 */
package io.stellflow.tools;
