/** Stellflow storage-ffm module. */
package io.stellflow.storage;
