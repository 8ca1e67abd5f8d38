package io.stellflow.perf;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import io.stellflow.testsupport.IntegrationTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The perf lab's part of the layering of {@code ../shared/DESIGN.md} section 2, on its compiled main
 * classes (the tools module's {@code LayeringTest} and {@code ModuleGraphTest} check every other
 * module): only the JMH benchmarks of the broker ({@code io.stellflow.perf.jmh.broker}) use the
 * broker, the load generator is a client; perf does not use the tools; the consumer-group lab driver
 * needs only the JDK and HdrHistogram; no package cycles.
 */
@IntegrationTest
class PerfLayeringTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        ImportOption noTests = (Location l) -> !l.contains("-tests.jar") && !l.contains("/test-classes/");
        classes = new ClassFileImporter().withImportOption(noTests).importPackages("io.stellflow.perf");
        assertThat(classes.stream().map(JavaClass::getName)).contains(PerfCommand.class.getName());
    }

    @Test
    void onlyTheBrokerBenchmarksUseTheBroker() {
        noClasses()
                .that()
                .resideInAPackage("io.stellflow.perf..")
                .and()
                .resideOutsideOfPackage("io.stellflow.perf.jmh.broker..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.stellflow.broker..")
                .because("nothing depends on broker but the JMH benchmarks that measure it")
                .check(classes);
    }

    @Test
    void perfDoesNotUseTheTools() {
        noClasses()
                .that()
                .resideInAPackage("io.stellflow.perf..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.stellflow.tools..")
                .because("tools and perf are leaves")
                .check(classes);
    }

    @Test
    void theGroupBenchDriverNeedsOnlyTheJdkAndHdrHistogram() {
        classes()
                .that()
                .resideInAPackage("io.stellflow.perf.groups..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("java..", "org.HdrHistogram..", "io.stellflow.perf.groups..")
                .because("Kafka's side of the group lab runs it with Kafka's jars and the perf jar only"
                        + " (perf/kafka/KafkaGroupBench.java)")
                .check(classes);
    }

    @Test
    void theTxnBenchDriverNeedsOnlyTheJdkHdrHistogramAndTheGroupBenchLine() {
        classes()
                .that()
                .resideInAPackage("io.stellflow.perf.txn..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        "java..", "org.HdrHistogram..", "io.stellflow.perf.txn..", "io.stellflow.perf.groups..")
                .because("Kafka's side of the transactions lab runs it with Kafka's jars and the perf jar only"
                        + " (perf/kafka/KafkaTxnBench.java)")
                .check(classes);
    }

    @Test
    void noPackagesOfPerfDependOnEachOtherInACycle() {
        SlicesRuleDefinition.slices()
                .assignedFrom(new SliceAssignment() {
                    @Override
                    public SliceIdentifier getIdentifierOf(JavaClass c) {
                        return c.getPackageName().startsWith("io.stellflow.perf")
                                ? SliceIdentifier.of(c.getPackageName())
                                : SliceIdentifier.ignore();
                    }

                    @Override
                    public String getDescription() {
                        return "the packages of io.stellflow.perf";
                    }
                })
                .should()
                .beFreeOfCycles()
                .check(classes);
    }
}
