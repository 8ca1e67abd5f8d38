/** Stellflow broker module. */
package io.stellflow.broker;
