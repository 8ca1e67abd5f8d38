package io.stellflow.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Marks an integration or soak test: one that starts a broker, a controller, a cluster or Ratis,
 * opens sockets, or takes more than about 2 s. Tagged {@value #TAG}; {@code ./mvnw -B verify} runs
 * every test, {@code ./mvnw -B verify -Punit} (root pom) only the untagged unit tests.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag(IntegrationTest.TAG)
public @interface IntegrationTest {
    /** The JUnit tag this annotation applies. */
    String TAG = "integration";
}
