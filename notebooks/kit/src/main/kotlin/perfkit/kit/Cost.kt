package perfkit.kit

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory
import java.nio.file.Path
import kotlin.io.path.exists

/** A host type from env/hosts.yaml. A null price means unknown (e.g. this machine): costs are then not computed. */
data class HostType(
    val name: String, val vcpu: Int, val memoryGiB: Double, val pricePerHour: Double?,
    val currency: String, val priceDate: String?, val source: String,
)

/** The host catalog: a small, user-editable list of host types with their prices. */
fun loadHosts(file: Path = dataRoot().parent.resolve("env/hosts.yaml")): Map<String, HostType> {
    if (!file.exists()) throw RunFormatException("missing host catalog: $file")
    val root = try { ObjectMapper(YAMLFactory()).readTree(file.toFile()) } catch (e: Exception) {
        throw RunFormatException("corrupt host catalog $file: ${e.message?.lineSequence()?.first()}", e)
    }
    val hosts = root?.get("hosts") ?: throw RunFormatException("corrupt host catalog $file: no 'hosts' list")
    return hosts.associate { h ->
        val name = h["name"]?.asText() ?: throw RunFormatException("corrupt host catalog $file: a host without a name")
        val price = h["price_per_hour"]
        name to HostType(name, h["vcpu"].asInt(), h["memory_gib"].asDouble(),
            if (price == null || price.isNull) null else price.asDouble(),
            h.path("currency").asText("USD"), h["price_date"]?.takeIf { !it.isNull }?.asText(), h.path("source").asText(""))
    }
}

/** Cost of a million operations on one host billed [pricePerHour], sustaining [opsPerSecond]. */
fun costPerMillion(pricePerHour: Double, opsPerSecond: Double): Double {
    require(opsPerSecond > 0) { "throughput must be positive to cost it" }
    return pricePerHour / (opsPerSecond * 3600 / 1e6)
}

/** Same, for a host type; null when its price is unknown. */
fun HostType.costPerMillion(opsPerSecond: Double): Double? = pricePerHour?.let { costPerMillion(it, opsPerSecond) }

/** Hosts needed for [demandPerSecond] when one host sustains [capacityPerHost] at the SLO (whole hosts). */
fun hostsNeeded(demandPerSecond: Double, capacityPerHost: Double): Int {
    require(capacityPerHost > 0) { "capacity at SLO must be positive" }
    return kotlin.math.ceil(demandPerSecond / capacityPerHost).toInt()
}

/** [cost] relative to [baseline]: 1.0 is the same, 0.25 a quarter. */
fun relativeCost(cost: Double, baseline: Double): Double = cost / baseline

/** Saving of [cost] against [baseline] in percent (99.8 means 1/500 of the baseline). */
fun savingPercent(cost: Double, baseline: Double): Double = 100.0 * (1 - cost / baseline)

/** This machine priced per vCPU-hour like [host]: [pricePerHour] for its cores, and a one-line Markdown [description]. */
data class PricedMachine(val name: String, val cores: Int, val pricePerHour: Double, val host: HostType, val description: String)

/**
 * Prices a machine of [cores] vCPUs at the per-vCPU rate of the host type [hostType] from the catalog:
 * the machine running the study usually has no price of its own.
 */
fun pricedMachine(hostType: String, cores: Int, hosts: Map<String, HostType> = loadHosts()): PricedMachine {
    require(cores > 0) { "cores must be positive, got $cores" }
    val host = hosts[hostType] ?: throw RunFormatException("unknown host type '$hostType' (env/hosts.yaml has: ${hosts.keys.joinToString()})")
    val hostPrice = host.pricePerHour ?: throw RunFormatException("host type '$hostType' has no price in env/hosts.yaml: choose one with a price")
    val price = hostPrice / host.vcpu * cores
    val date = host.priceDate?.let { ", price of $it" } ?: ""
    val description = "Priced as **${escapeHtml(host.name)}** per vCPU-hour (\$${formatNumber(hostPrice)}/h for ${host.vcpu} vCPUs, " +
        "${escapeHtml(host.source)}$date): \$${formatNumber(price)}/h for this $cores-vCPU machine."
    return PricedMachine(host.name, cores, price, host, description)
}
