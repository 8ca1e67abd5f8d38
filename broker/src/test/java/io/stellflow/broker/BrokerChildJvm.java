package io.stellflow.broker;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * The command line of a broker child JVM for the multi-process tests ({@code FaultCluster}, {@code
 * ClusterHarness}): this JVM's java and class path, a small serial-GC heap, C1 only, and a dynamic
 * CDS archive ({@code target/broker-child-<class path hash>.jsa}) written by the first child that exits cleanly and
 * mapped by every later start. Restarts are most of a kill round's time on a loaded 2-core machine,
 * and most of a restart is class loading.
 *
 * <p>CDS refuses a class path with a non-empty directory ("Error occurred during CDS dumping"), and
 * the test class path has two ({@code target/classes}, {@code target/test-classes}): each directory
 * is packed once per test JVM into a jar under {@code target/broker-child-cp/}, and the children run
 * on the jars. A jar is replaced only when its bytes change (a new build): then the JVM ignores the
 * old archive and writes a new one.
 *
 * <p>Thread-safe.
 */
public final class BrokerChildJvm {
    private static final Path TARGET = Path.of("target").toAbsolutePath();
    private static String classPath;
    private static Path archive;

    private BrokerChildJvm() {}

    /**
     * {@code java -Xmx<heapMb>m ... -cp <jars> io.stellflow.broker.StellflowMain <propertiesFile>}.
     *
     * @param heapMb maximum heap in MiB
     * @param propertiesFile the broker's properties file
     * @throws UncheckedIOException when a class directory cannot be packed
     */
    public static List<String> command(int heapMb, Path propertiesFile) {
        String java = ProcessHandle.current().info().command().orElseThrow();
        return List.of(
                java,
                "-Xmx" + heapMb + "m",
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-XX:+AutoCreateSharedArchive",
                "-XX:SharedArchiveFile=" + archive(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                classPath(),
                "io.stellflow.broker.StellflowMain",
                propertiesFile.toString());
    }

    /**
     * The archive of this class path: named after the jars' paths, sizes and times, since a JVM given
     * an archive of other jars runs without it and (JDK 25) does not write it again at exit.
     */
    static synchronized Path archive() {
        if (archive == null) {
            long h = 17;
            for (String entry : classPath().split(java.io.File.pathSeparator)) {
                Path p = Path.of(entry);
                h = h * 31 + entry.hashCode();
                try {
                    h = h * 31 + Files.size(p);
                    h = h * 31 + Files.getLastModifiedTime(p).toMillis();
                } catch (IOException e) {
                    h = h * 31 + 1; // a missing entry: the JVM skips it too
                }
            }
            archive = TARGET.resolve("broker-child-" + Long.toHexString(h) + ".jsa");
        }
        return archive;
    }

    /** This JVM's class path with each directory replaced by a jar of its contents (once per JVM). */
    static synchronized String classPath() {
        if (classPath == null) {
            List<String> out = new ArrayList<>();
            int n = 0;
            for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
                Path p = Path.of(entry);
                if (Files.isDirectory(p)) {
                    Path jar = TARGET.resolve("broker-child-cp").resolve(n++ + "-" + p.getFileName() + ".jar");
                    pack(p, jar);
                    out.add(jar.toString());
                } else {
                    out.add(entry);
                }
            }
            classPath = String.join(java.io.File.pathSeparator, out);
        }
        return classPath;
    }

    private static void pack(Path dir, Path jar) {
        try {
            Files.createDirectories(jar.getParent());
            Path tmp = jar.resolveSibling(jar.getFileName() + ".tmp");
            try (OutputStream fo = Files.newOutputStream(tmp);
                    JarOutputStream out = new JarOutputStream(fo);
                    Stream<Path> files = Files.walk(dir)) {
                for (Path f : (Iterable<Path>) files.sorted()::iterator) {
                    if (f.equals(dir)) {
                        continue;
                    }
                    String name = dir.relativize(f).toString().replace(java.io.File.separatorChar, '/');
                    JarEntry e = new JarEntry(Files.isDirectory(f) ? name + "/" : name);
                    e.setTime(0); // the same files give the same bytes
                    out.putNextEntry(e);
                    if (!Files.isDirectory(f)) {
                        Files.copy(f, out);
                    }
                    out.closeEntry();
                }
            }
            if (Files.exists(jar) && Files.mismatch(tmp, jar) == -1) {
                Files.delete(tmp); // unchanged: keep the jar (and its time), so the archive stays valid
            } else {
                Files.move(tmp, jar, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("packing " + dir + " into " + jar, e);
        }
    }
}
