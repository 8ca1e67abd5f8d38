package io.stellflow.layering;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SliceRule;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The layering of {@code ../shared/DESIGN.md} section 2 on the compiled main classes of every module
 * but {@code perf} (the tools' test classpath holds them all; {@code perf} checks its own classes in
 * its {@code PerfLayeringTest}): each module's classes use only the modules it may depend on, the
 * tools use only the client side of the controller module, and no two packages of a module depend on
 * each other in a cycle. {@link ModuleGraphTest} checks the same graph on the poms.
 *
 * <p>Modules are told apart by their root packages: {@code io.stellflow.protocol}, {@code
 * io.stellflow.server.common}, {@code io.stellflow.storage}, {@code io.stellflow.controller}, {@code
 * io.stellflow.broker}, {@code io.stellflow.client}, {@code io.stellflow.tools}, {@code
 * io.stellflow.testsupport} (test-support: its main classes are test helpers, on test classpaths only).
 */
@IntegrationTest
class LayeringTest {
    static final String PROTOCOL = "io.stellflow.protocol..";
    static final String SERVER_COMMON = "io.stellflow.server.common..";
    static final String STORAGE = "io.stellflow.storage..";
    static final String CONTROLLER = "io.stellflow.controller..";
    static final String BROKER = "io.stellflow.broker..";
    static final String CLIENT = "io.stellflow.client..";
    static final String TOOLS = "io.stellflow.tools..";
    static final String PERF = "io.stellflow.perf..";
    static final String TEST_SUPPORT = "io.stellflow.testsupport..";

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = mainClasses("io.stellflow");
        // A broken classpath would make every rule below pass vacuously.
        for (String root : List.of(
                "io.stellflow.protocol",
                "io.stellflow.server.common",
                "io.stellflow.storage",
                "io.stellflow.controller",
                "io.stellflow.broker",
                "io.stellflow.client",
                "io.stellflow.tools",
                "io.stellflow.testsupport")) {
            assertThat(classes.stream().filter(c -> c.getPackageName().startsWith(root)))
                    .as("main classes of %s", root)
                    .isNotEmpty();
        }
    }

    /**
     * The main classes (not tests: neither {@code test-classes} directories nor test jars) of the
     * packages under {@code root} on the classpath.
     */
    static JavaClasses mainClasses(String root) {
        ImportOption noTestJars = (Location l) -> !l.contains("-tests.jar") && !l.contains("/test-classes/");
        return new ClassFileImporter().withImportOption(noTestJars).importPackages(root);
    }

    @Test
    void protocolUsesNoOtherModuleOfOurs() {
        onlyOurs(PROTOCOL, PROTOCOL);
    }

    @Test
    void serverCommonUsesNoOtherModuleOfOurs() {
        onlyOurs(SERVER_COMMON, SERVER_COMMON);
    }

    @Test
    void storageUsesProtocolAndServerCommonOnly() {
        onlyOurs(STORAGE, STORAGE, PROTOCOL, SERVER_COMMON);
    }

    @Test
    void theClientUsesProtocolOnly() {
        onlyOurs(CLIENT, CLIENT, PROTOCOL);
    }

    @Test
    void theControllerUsesServerCommonOnly() {
        onlyOurs(CONTROLLER, CONTROLLER, SERVER_COMMON);
    }

    @Test
    void nothingButPerfUsesTheBroker() {
        noClasses()
                .that()
                .resideOutsideOfPackage(BROKER)
                .should()
                .dependOnClassesThat()
                .resideInAPackage(BROKER)
                .because("nothing depends on broker (DESIGN.md section 2); perf checks its JMH exception itself")
                .check(classes);
    }

    @Test
    void nothingUsesTheLeaves() {
        noClasses()
                .that()
                .resideOutsideOfPackages(TOOLS, PERF)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(TOOLS, PERF)
                .because("tools and perf are leaves")
                .check(classes);
    }

    @Test
    void testSupportUsesNoModuleOfOurs() {
        onlyOurs(TEST_SUPPORT, TEST_SUPPORT);
    }

    @Test
    void noMainClassUsesTestSupport() {
        noClasses()
                .that()
                .resideOutsideOfPackage(TEST_SUPPORT)
                .should()
                .dependOnClassesThat()
                .resideInAPackage(TEST_SUPPORT)
                .because("test-support is for tests only: every module names it in test scope (ModuleGraphTest)")
                .check(classes);
    }

    @Test
    void theToolsUseTheClientAndOnlyTheClientSideOfTheController() {
        DescribedPredicate<JavaClass> controllerServerSide =
                new DescribedPredicate<>("the server side of the controller module (all but ControllerClient, "
                        + "ControllerUnavailableException and the generated messages)") {
                    @Override
                    public boolean test(JavaClass c) {
                        String pkg = c.getPackageName();
                        if (!pkg.equals("io.stellflow.controller") && !pkg.startsWith("io.stellflow.controller.")) {
                            return false;
                        }
                        if (pkg.equals("io.stellflow.controller.proto")) {
                            return false;
                        }
                        String outer = c.getName().contains("$")
                                ? c.getName().substring(0, c.getName().indexOf('$'))
                                : c.getName();
                        return !outer.equals("io.stellflow.controller.ControllerClient")
                                && !outer.equals("io.stellflow.controller.ControllerUnavailableException");
                    }
                };
        noClasses()
                .that()
                .resideInAPackage(TOOLS)
                .should()
                .dependOnClassesThat(controllerServerSide)
                .because("tools depend on the client and the controller client only (DESIGN.md section 2)")
                .check(classes);
        onlyOurs(TOOLS, TOOLS, CLIENT, PROTOCOL, CONTROLLER, STORAGE, "io.stellflow.server.common.topic..");
    }

    @Test
    void theToolsReadSegmentFilesThroughSegmentDumpOnly() {
        noClasses()
                .that()
                .resideInAPackage(TOOLS)
                .should()
                .dependOnClassesThat(new DescribedPredicate<JavaClass>("storage classes other than SegmentDump") {
                    @Override
                    public boolean test(JavaClass c) {
                        String outer = c.getName().contains("$")
                                ? c.getName().substring(0, c.getName().indexOf('$'))
                                : c.getName();
                        return c.getPackageName().startsWith("io.stellflow.storage")
                                && !outer.equals("io.stellflow.storage.SegmentDump");
                    }
                })
                .because("stellflow-dump-log.sh reads segment files offline through SegmentDump (DESIGN.md section 2)")
                .check(classes);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "io.stellflow.protocol",
                "io.stellflow.server.common",
                "io.stellflow.storage",
                "io.stellflow.controller",
                "io.stellflow.broker",
                "io.stellflow.client",
                "io.stellflow.tools"
            })
    void noPackagesOfAModuleDependOnEachOtherInACycle(String moduleRoot) {
        SliceRule rule = SlicesRuleDefinition.slices()
                .assignedFrom(packagesOf(moduleRoot))
                .should()
                .beFreeOfCycles();
        rule.check(classes);
    }

    /** Every package under {@code moduleRoot} (the root package included) is one slice. */
    static SliceAssignment packagesOf(String moduleRoot) {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                String pkg = c.getPackageName();
                return pkg.equals(moduleRoot) || pkg.startsWith(moduleRoot + ".")
                        ? SliceIdentifier.of(pkg)
                        : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "the packages of " + moduleRoot;
            }
        };
    }

    /** The classes of {@code module} use, of our modules, only {@code allowed}. */
    private static void onlyOurs(String module, String... allowed) {
        noClasses()
                .that()
                .resideInAPackage(module)
                .should()
                .dependOnClassesThat(
                        new DescribedPredicate<JavaClass>("a module of ours other than " + List.of(allowed)) {
                            @Override
                            public boolean test(JavaClass c) {
                                if (!c.getPackageName().startsWith("io.stellflow.")) {
                                    return false;
                                }
                                for (String a : allowed) {
                                    if (c.getPackage().getName().startsWith(a.substring(0, a.length() - 2))) {
                                        return false;
                                    }
                                }
                                return true;
                            }
                        })
                .check(classes);
    }
}
