package perfkit.kit

/**
 * A notebook parameter: the environment variable [name] when set (how ./bench notebooks passes
 * choices to headless runs), otherwise [default] (what a person edits in the parameters cell).
 */
fun param(name: String, default: String): String = System.getenv(name)?.takeIf { it.isNotBlank() } ?: default
