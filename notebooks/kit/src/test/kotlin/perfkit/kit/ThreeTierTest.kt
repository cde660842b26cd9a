package perfkit.kit

import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.name
import kotlin.io.path.readLines
import kotlin.io.path.writeLines
import kotlin.test.assertEquals
import kotlin.test.assertTrue

class ThreeTierTest {
    private val repoData: Path = generateSequence(Path.of("").toAbsolutePath()) { it.parent }
        .first { Files.exists(it.resolve("data/schema/run.schema.json")) }.resolve("data")
    private val reference: Path = Files.list(repoData.resolve("reference/three-tier")).use { it.toList().single() }

    @TempDir
    lateinit var tmp: Path

    /** The reference run's manifest and saturation table, with every templates step marked [warm] as given. */
    private fun referenceWithTemplatesWarm(warm: Boolean): RecordedRun {
        val dir = Files.createDirectories(tmp.resolve("three-tier").resolve(reference.name))
        for (table in listOf("run.json", "inserts.csv", "open.csv", "chain.csv", "capacity.csv")) Files.copy(reference.resolve(table), dir.resolve(table))
        val lines = reference.resolve("saturation.csv").readLines()
        val warmAt = lines.first().split(",").indexOf("warm")
        dir.resolve("saturation.csv").writeLines(listOf(lines.first()) + lines.drop(1).map { line ->
            val cells = line.split(",").toMutableList()
            if (cells[1] == "templates") cells[warmAt] = warm.toString()
            cells.joinToString(",")
        })
        return loadRun(dir)
    }

    private fun templateClaims(run: RecordedRun) = threeTierClaims(listOf(run), published("three-tier", repoData))
        .filter { "JSP" in it.original || "FreeMarker" in it.original }

    @Test
    fun `the template claims are answered from warm steps`() {
        val claims = templateClaims(referenceWithTemplatesWarm(true))
        assertEquals(3, claims.size)
        assertTrue(claims.all { "Fieller interval" in it.why || "range" in it.why }, claims.joinToString { it.why })
    }

    @Test
    fun `a templates round with only cold steps still names the original's claims and says why it cannot answer`() {
        val claims = templateClaims(referenceWithTemplatesWarm(false))
        assertEquals(3, claims.size, "each claim stays in the table")
        assertTrue("0.733" in claims.first().original, claims.first().original)
        assertTrue(claims.all { it.answer == Answer.CANNOT_TELL && "JIT still compiled" in it.why }, claims.joinToString { it.why })
    }

    @Test
    fun `latency is compared fork by fork at each fork's rate, and a late driver in a pair used stops the answer`() {
        // the reference: each fork chose its own common rate, and in one fork the driver ran a chain late at p99,
        // beyond a tenth of the SLO: the pair that fork gives is used, so the answer stops there
        val latency = threeTierClaims(listOf(loadRun(reference)), published("three-tier", repoData)).single { "worse latency" in it.original }
        assertEquals(Answer.CANNOT_TELL, latency.answer, latency.why)
        val checks = latency.checks.associateBy { it.name }
        assertTrue(checks.getValue(ENOUGH_FORKS).detail.isNotBlank())
        assertEquals(false, checks.getValue(DRIVER_ON_TIME).met)
        assertTrue(Regex("`\\w+` fork \\d late by [\\d.]+ ms").containsMatchIn(checks.getValue(DRIVER_ON_TIME).detail), checks.getValue(DRIVER_ON_TIME).detail)
        assertEquals(true, checks.getValue(SAME_LOAD).met, "within a fork both ran at one rate: " + checks.getValue(SAME_LOAD).detail)
        assertTrue("fork by fork" in latency.here, latency.here)
    }

    @Test
    fun `a throughput ratio at the machine's wall cannot be told, with what the interval alone said`() {
        // the reference's chain ran every saturation step at 195 to 199% of 200%: a ratio of two walls
        val mixed = threeTierClaims(listOf(loadRun(reference)), published("three-tier", repoData)).single { "Mixing" in it.original }
        assertEquals(Answer.CANNOT_TELL, mixed.answer)
        assertEquals(false, mixed.checks.single { it.name == BELOW_WALL }.met)
        assertTrue(mixed.checks.single { it.name == WARM }.met == true, "10 s steps judge warmth: the cold ones are left out")
    }
}
