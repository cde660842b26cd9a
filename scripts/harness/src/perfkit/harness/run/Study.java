package perfkit.harness.run;

import perfkit.harness.cli.Cli;
import perfkit.harness.os.Errors;
import perfkit.harness.process.Fork;
import perfkit.harness.process.ForkProtocol;
import perfkit.harness.process.Janitor;
import perfkit.harness.record.RunLayout;
import perfkit.harness.os.UserError;

import java.nio.file.Path;
import java.util.Map;

/**
 * The entry point every study script calls from its main(): parses options, runs the study inside a
 * {@link Run}, and turns every ending into a manifest status and an exit code:
 * 0 complete, 1 failed, 2 user error, 130 or 143 interrupted by Ctrl-C or SIGTERM (set by {@link Run}'s shutdown hook).
 */
public final class Study {
    /** The parent side: plans the run, starts forks, writes tables. */
    public interface Body { void run(Run run) throws Exception; }

    static final String JANITOR_FLAG = "--perfkit-janitor";
    /**
     * The tests' refusal check: every command line in a file (a JSON array of arrays of arguments) through this
     * study's option table and rules, in one JVM, each answer a JSON line: {"error": the one line a user would see}
     * or {"error": null}. It runs nothing. One end-to-end refusal per study still checks exit 2 and the run folder.
     */
    static final String CHECK_OPTIONS_FLAG = "--perfkit-check-options";

    private Study() {}

    public static void main(String[] args, Cli cli, Class<?> mainClass, Body body, Fork.Body forkBody) {
        if (args.length > 0 && args[0].equals(ForkProtocol.FLAG)) {
            Fork.main(args, forkBody);
            return;
        }
        if (args.length == 2 && args[0].equals(JANITOR_FLAG)) { // ./bench list: tidy up after dead runs, then list
            Janitor.sweep(Path.of(args[1]));
            Janitor.sweepClusters();
            return;
        }
        if (args.length == 2 && args[0].equals(CHECK_OPTIONS_FLAG)) {
            checkOptions(cli, Path.of(args[1]));
            return;
        }
        Run run = null;
        try {
            Map<String, String> params = cli.parse(args);
            if (params == null) return; // --help
            run = Run.start(cli.study(), params, mainClass);
            if (cli.slo() != null) recordSlo(run, cli);
            body.run(run);
            run.finish(RunLayout.COMPLETE, null);
            run.progress().clear();
            System.out.println(run.dir());
        } catch (UserError e) {
            if (run != null && run.awaitShutdown(0)) return; // the signal's shutdown exits (130, 143)
            System.err.println("error: " + e.getMessage());
            if (run != null) run.finish(RunLayout.FAILED, e.getMessage());
            System.exit(2);
        } catch (Throwable t) {
            String reason = Errors.oneLine(t);
            if (run == null) {
                System.err.println("error: " + cli.study() + ": " + reason);
                System.exit(1);
            }
            // A Ctrl-C to the process group also stops the forks and services, which the body may see first:
            // give this JVM's own signal a moment, then let its shutdown mark the run interrupted and exit 130.
            if (run.awaitShutdown(1)) return;
            if (run.isRunning()) Errors.writeStackTrace(run.dir().resolve("error.txt"), t);
            if (run.finish(RunLayout.FAILED, reason)) {
                run.progress().clear();
                System.err.println("error: " + cli.study() + " failed: " + reason + " (run marked failed: " + run.dir() + ")");
            }
            System.exit(1);
        }
    }

    private static void checkOptions(Cli cli, Path cases) {
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        try {
            for (var c : json.readTree(cases.toFile())) {
                String[] args = new String[c.size()];
                for (int i = 0; i < args.length; i++) args[i] = c.get(i).asText();
                String error = null;
                try {
                    cli.parse(args);
                } catch (UserError e) {
                    error = "error: " + e.getMessage();
                } catch (RuntimeException e) {
                    error = "not a user error: " + Errors.oneLine(e); // a refusal must be a UserError, never a crash
                }
                System.out.println(json.createObjectNode().put("error", error));
            }
        } catch (java.io.IOException e) {
            System.err.println("error: cannot read " + cases + ": " + e.getMessage());
            System.exit(2);
        }
    }

    /** The SLO's definition beside its value, so a reader of the manifest (or a post) knows what was bounded. */
    private static void recordSlo(Run run, Cli cli) {
        Cli.Slo slo = cli.slo();
        com.fasterxml.jackson.databind.node.ObjectNode n = run.notes().putObject("slo");
        n.put("ms", cli.sloMs(run.typed()));
        n.put("percentile", slo.percentile());
        n.put("latency", slo.latency());
        n.put("timedFrom", slo.timedFrom());
        n.put("per", slo.per());
        run.writeManifest();
    }
}
