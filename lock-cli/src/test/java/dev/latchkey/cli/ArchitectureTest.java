package dev.latchkey.cli;

import static com.tngtech.archunit.base.DescribedPredicate.or;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What each package of the main sources may import, as docs/design.md ("Packages and what each may
 * import") draws it; a new import across these lines fails here. This module's test class path holds
 * the main classes of lock-api, every backend, lock-bench, lock-tck and the command; lock-micrometer,
 * lock-spring and lock-bench-peers are not on it and not checked.
 */
class ArchitectureTest {
    /** Main classes only: no test classes (a test may reach anything) and no test-jars. */
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ArchitectureTest::isMain)
            .importPackages("dev.latchkey");

    private static final String API = "dev.latchkey";
    private static final String SPI = "dev.latchkey.spi";
    private static final String ENGINE = "dev.latchkey.engine";
    private static final String POSTGRES = "dev.latchkey.postgres..";
    private static final String PG_ADVISORY = "dev.latchkey.postgres.advisory";
    private static final String PG_LEASE = "dev.latchkey.postgres.lease";
    private static final String PG_SHARED = "dev.latchkey.postgres.shared";

    private static boolean isMain(Location location) {
        return !location.contains("/test-classes/") && !location.matches(java.util.regex.Pattern.compile(".*-tests\\.jar.*"));
    }

    @Test
    void theImportCoversEveryModuleOnTheClassPath() {
        // a rule over packages that were not imported would pass vacuously
        for (String pkg : List.of(API, SPI, ENGINE, "dev.latchkey.file", "dev.latchkey.mem", "dev.latchkey.postgres",
                PG_ADVISORY, PG_LEASE, PG_SHARED, "dev.latchkey.clickhouse", "dev.latchkey.s3", "dev.latchkey.gcs",
                "dev.latchkey.azure", "dev.latchkey.tck", "dev.latchkey.bench", "dev.latchkey.process", "dev.latchkey.cli")) {
            assertThat(MAIN.containPackage(pkg)).as(pkg).isTrue();
            assertThat(MAIN.getPackage(pkg).getClasses()).as(pkg).isNotEmpty();
        }
    }

    /** The API users call reaches the SPI (a provider opens the manager) and the JDK, nothing else. */
    @Test
    void apiImportsTheSpiAndTheJdkOnly() {
        onlyJdkAnd(API, API, SPI);
    }

    /** {@code LockProvider.storeOf} recognises the engine, so the SPI may import it. */
    @Test
    void spiImportsTheApiTheEngineAndTheJdkOnly() {
        onlyJdkAnd(SPI, API, SPI, ENGINE);
    }

    @Test
    void engineImportsTheApiTheSpiAndTheJdkOnly() {
        onlyJdkAnd(ENGINE, API, SPI, ENGINE);
    }

    /** The embedded backends are built like any other: on the API, the SPI and the engine. */
    @ParameterizedTest
    @ValueSource(strings = {"dev.latchkey.file", "dev.latchkey.mem"})
    void embeddedBackendsImportTheApiTheSpiTheEngineAndTheJdkOnly(String pkg) {
        onlyJdkAnd(pkg, API, SPI, ENGINE, pkg);
    }

    /** lock-api's module does not export file:// and mem://: nothing reaches them but through a URI. */
    @Test
    void nothingOutsideTheEmbeddedBackendsImportsThem() {
        noClasses().that().resideOutsideOfPackages("dev.latchkey.file", "dev.latchkey.mem")
                .should().dependOnClassesThat().resideInAnyPackage("dev.latchkey.file", "dev.latchkey.mem")
                .check(MAIN);
    }

    /**
     * A backend (and the kit) imports its own package, the API, the SPI and the engine of Latchkey, and
     * any library: never another backend, the bench, the kit or the command.
     */
    @ParameterizedTest
    @ValueSource(strings = {POSTGRES, "dev.latchkey.clickhouse", "dev.latchkey.s3", "dev.latchkey.gcs",
            "dev.latchkey.azure", "dev.latchkey.tck"})
    void backendsAndTheKitImportOnlyTheApiSpiAndEngineOfLatchkey(String pkg) {
        ofLatchkeyOnly(pkg, API, SPI, ENGINE, pkg);
    }

    /**
     * lock-postgres holds two designs on one base: a mode reaches, of lock-postgres, only itself and the
     * shared parts — never the other mode, nor the entry package that chooses between them.
     */
    @ParameterizedTest
    @ValueSource(strings = {PG_ADVISORY, PG_LEASE})
    void postgresModesNeverImportEachOther(String mode) {
        ofPostgresOnly(mode, mode, PG_SHARED);
    }

    /** What both PostgreSQL modes share imports neither mode (nor the entry package). */
    @Test
    void postgresSharedPartsImportNeitherMode() {
        ofPostgresOnly(PG_SHARED, PG_SHARED);
    }

    /** The bench measures through the API and the SPI's URI; its baselines are found by ServiceLoader. */
    @Test
    void benchImportsOnlyTheApiAndSpiOfLatchkey() {
        ofLatchkeyOnly("dev.latchkey.bench", API, SPI, "dev.latchkey.bench");
    }

    /** The command finds backends by URI (ServiceLoader), never by import. */
    @Test
    void commandImportsNoBackend() {
        ofLatchkeyOnly("dev.latchkey.cli..", API, SPI, ENGINE, "dev.latchkey.bench", "dev.latchkey.tck", "dev.latchkey.process",
                "dev.latchkey.cli..");
    }

    /** The process supervisor is the API and the SPI's safety margin plus the JDK: a library user's dependency. */
    @Test
    void processImportsTheApiTheSpiAndTheJdkOnly() {
        onlyJdkAnd("dev.latchkey.process", API, SPI, "dev.latchkey.process");
    }

    private static void onlyJdkAnd(String pkg, String... allowed) {
        classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat(or(resideInAnyPackage("java.."), resideInAnyPackage(allowed)))
                .check(MAIN);
    }

    private static void ofPostgresOnly(String pkg, String... allowed) {
        classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat(or(resideOutsideOfPackage(POSTGRES), resideInAnyPackage(allowed)))
                .check(MAIN);
    }

    private static void ofLatchkeyOnly(String pkg, String... allowed) {
        classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat(or(resideOutsideOfPackage("dev.latchkey.."), resideInAnyPackage(allowed)))
                .check(MAIN);
    }
}
