package io.stellflow.layering;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The module graph of {@code ../shared/DESIGN.md} section 2, checked on the poms: which of our modules
 * each module may depend on, in which scope. Read from the files (the root pom's {@code <modules>} and
 * each module's {@code <dependencies>}), so a dependency added in any module fails here, whichever
 * module is built. {@link LayeringTest} checks the same rules on the compiled classes (a class can
 * reach a module through a transitive dependency).
 */
class ModuleGraphTest {
    /** One of our dependencies of a module: the module it names, its scope, its type. */
    record Dependency(String module, String scope, String type) {
        boolean isTest() {
            return scope.equals("test");
        }

        @Override
        public String toString() {
            return module + (type.equals("jar") ? "" : ":" + type) + " (" + scope + ")";
        }
    }

    private static final String PREFIX = "stellflow-";

    private static Map<String, List<Dependency>> graph;

    @BeforeAll
    static void readPoms() throws Exception {
        graph = read(root());
    }

    @Test
    void everyModuleOfTheBuildIsKnownToThisTest() {
        assertThat(graph.keySet())
                .containsExactlyInAnyOrder(
                        "test-support",
                        "protocol",
                        "server-common",
                        "storage-ffm",
                        "controller",
                        "broker",
                        "client",
                        "tools",
                        "perf");
    }

    @Test
    void protocolAndServerCommonDependOnNoModuleOfOursButTestSupportInTests() {
        assertThat(withoutTestSupport(graph.get("protocol"))).as("protocol").isEmpty();
        assertThat(withoutTestSupport(graph.get("server-common")))
                .as("server-common")
                .isEmpty();
    }

    @Test
    void testSupportIsALeafUsedInTestScopeOnly() {
        assertThat(graph.get("test-support"))
                .as("test-support depends on no module of ours")
                .isEmpty();
        graph.forEach((module, deps) -> {
            for (Dependency d : deps) {
                if (d.module().equals("test-support")) {
                    assertThat(d.isTest())
                            .as("%s depends on %s: test-support is for tests only", module, d)
                            .isTrue();
                }
            }
        });
    }

    @Test
    void storageDependsOnProtocolAndServerCommonOnly() {
        assertThat(modules(withoutTestSupport(graph.get("storage-ffm")))).isSubsetOf("protocol", "server-common");
    }

    @Test
    void theClientDependsOnProtocolOnly() {
        assertThat(modules(withoutTestSupport(graph.get("client")))).isSubsetOf("protocol");
    }

    @Test
    void nothingDependsOnTheBrokerButThePerfLabAndTheTestsOfToolsAndPerf() {
        graph.forEach((module, deps) -> {
            for (Dependency d : deps) {
                if (!d.module().equals("broker")) {
                    continue;
                }
                boolean allowed = module.equals("perf") || (module.equals("tools") && d.isTest());
                assertThat(allowed)
                        .as(
                                "%s depends on %s: only perf (its JMH benchmarks of the broker) and the tools' tests may",
                                module, d)
                        .isTrue();
            }
        });
    }

    @Test
    void toolsAndPerfAreLeaves() {
        graph.forEach((module, deps) ->
                assertThat(modules(deps)).as("%s depends on a leaf", module).doesNotContain("tools", "perf"));
    }

    @Test
    void theToolsUseTheClientAndTheControllerClientOnly() {
        Set<String> main = new TreeSet<>();
        for (Dependency d : graph.get("tools")) {
            if (!d.isTest()) {
                main.add(d.module());
            }
        }
        // controller: its client side only, which LayeringTest checks on the classes; storage-ffm:
        // SegmentDump only (stellflow-dump-log.sh reads segment files offline), also checked there.
        assertThat(main).isSubsetOf("protocol", "client", "controller", "server-common", "storage-ffm");
    }

    /** {@code deps} but a test-scope test-support (which {@link #testSupportIsALeafUsedInTestScopeOnly} checks). */
    private static List<Dependency> withoutTestSupport(List<Dependency> deps) {
        return deps.stream()
                .filter(d -> !(d.module().equals("test-support") && d.isTest()))
                .toList();
    }

    private static Set<String> modules(List<Dependency> deps) {
        Set<String> names = new TreeSet<>();
        deps.forEach(d -> names.add(d.module()));
        return names;
    }

    /** The repository root: the first directory up from here whose pom lists the modules. */
    static Path root() throws Exception {
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; i < 5 && dir != null; i++, dir = dir.getParent()) {
            Path pom = dir.resolve("pom.xml");
            if (Files.isRegularFile(pom) && Files.readString(pom).contains("<module>tools</module>")) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "the root pom.xml not found above " + Path.of("").toAbsolutePath());
    }

    /** Module directory name to its dependencies on our modules, in the root pom's order. */
    static Map<String, List<Dependency>> read(Path root) throws Exception {
        Map<String, String> byArtifact = new LinkedHashMap<>();
        List<String> modules = new ArrayList<>();
        for (Element m : children(parse(root.resolve("pom.xml")).getDocumentElement(), "modules", "module")) {
            String dir = m.getTextContent().trim();
            modules.add(dir);
            Element pom = parse(root.resolve(dir).resolve("pom.xml")).getDocumentElement();
            byArtifact.put(text(pom, "artifactId"), dir);
        }
        Map<String, List<Dependency>> graph = new LinkedHashMap<>();
        for (String dir : modules) {
            Element pom = parse(root.resolve(dir).resolve("pom.xml")).getDocumentElement();
            List<Dependency> deps = new ArrayList<>();
            for (Element d : children(pom, "dependencies", "dependency")) {
                if (!"io.stellflow".equals(text(d, "groupId"))) {
                    continue;
                }
                String artifact = text(d, "artifactId");
                String module = byArtifact.get(artifact);
                assertThat(module)
                        .as("%s names %s, not a module of the build", dir, artifact)
                        .isNotNull();
                assertThat(artifact).startsWith(PREFIX);
                String scope = text(d, "scope");
                String type = text(d, "type");
                deps.add(new Dependency(module, scope == null ? "compile" : scope, type == null ? "jar" : type));
            }
            graph.put(dir, deps);
        }
        return graph;
    }

    private static Document parse(Path pom) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(pom.toFile());
    }

    /** The {@code <child>} elements of {@code parent}'s direct {@code <list>} child. */
    private static List<Element> children(Element parent, String list, String child) {
        List<Element> found = new ArrayList<>();
        for (Element l : direct(parent, list)) {
            found.addAll(direct(l, child));
        }
        return found;
    }

    private static List<Element> direct(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    private static String text(Element parent, String name) {
        List<Element> found = direct(parent, name);
        return found.isEmpty() ? null : found.getFirst().getTextContent().trim();
    }
}
