/** Stellflow protocol module. */
package io.stellflow.protocol;
