/** Stellflow client module. */
package io.stellflow.client;
