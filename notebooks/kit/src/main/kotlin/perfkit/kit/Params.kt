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

/** A notebook parameter ([chooseParam]); prints which value won, so the lab never hides it. */
fun param(name: String, default: String): String = chooseParam(name, default).also { println(it) }.value
