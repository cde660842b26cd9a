package perfkit.kit

/** A notebook parameter's value and where it came from, said in one line under the parameters cell. */
data class ParamChoice(val name: String, val value: String, val source: String) {
    override fun toString() = "$name = \"$value\" ($source)"
}

/**
 * Which value a notebook parameter takes. Headless runs (`./bench notebooks` sets PERFKIT_HEADLESS=1) take the
 * environment variable [name] when it is set: that is how `--runs` reaches them. In the lab, the value written in
 * the parameters cell ([cellValue]) wins, so editing the cell and re-running always does what it says; a variable
 * set in the lab's environment is named as ignored rather than winning silently.
 */
fun chooseParam(name: String, cellValue: String, env: Map<String, String> = System.getenv()): ParamChoice {
    val fromEnv = env[name]?.takeIf { it.isNotBlank() }
    val headless = env["PERFKIT_HEADLESS"] == "1"
    return when {
        fromEnv != null && headless -> ParamChoice(name, fromEnv, "from the environment: ./bench notebooks")
        fromEnv != null && fromEnv != cellValue -> ParamChoice(name, cellValue, "this cell; the environment's \"$fromEnv\" is ignored in the lab")
        else -> ParamChoice(name, cellValue, "this cell")
    }
}

/** The parameters chosen since [parameters] last showed them, by name, in the order first chosen. */
private val chosen = LinkedHashMap<String, ParamChoice>()

/** A notebook parameter ([chooseParam]); the parameters cell ends with [parameters], which says which value won. */
fun param(name: String, default: String): String = chooseParam(name, default).also { synchronized(chosen) { chosen[it.name] = it } }.value

/**
 * Which value each [param] took and where it came from, one line each: the parameters cell's result, so the lab
 * never hides a value. A result rather than printed lines, because the kernel's printed output can arrive after
 * the cell has finished and be lost (Kotlin/kotlin-jupyter#497); a cell's result cannot.
 */
fun parameters(): Markdown = synchronized(chosen) {
    // the record starts afresh, so re-running an edited parameters cell shows only what it chooses now
    Markdown(chosen.values.joinToString("\n") { "- " + mdText(it.toString(), atLineStart = false) }).also { chosen.clear() }
}
