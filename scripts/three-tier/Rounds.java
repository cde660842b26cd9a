package perfkit.threetier;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.http.HttpLoad;
import perfkit.harness.cli.Params;
import perfkit.harness.run.Run;

import java.util.ArrayList;
import java.util.List;

/**
 * The plan of a run: the rounds of --rounds, one after another, each looping over its forks with fresh server JVMs
 * (and fresh databases). A cell is {@code <round>/<variant>}: {@code templates/jsp}, {@code inserts/postgres/strict},
 * {@code chain/async}.
 */
final class Rounds {
    /** One round of the study. */
    interface Round {
        /** The cells it will measure, in order. */
        List<String> cells();

        /** What it runs and how, in words, into the manifest's notes. */
        void describe(ObjectNode notes);

        /** Every fork of every cell. */
        void run() throws Exception;
    }

    private final Run run;
    private final ThreeTier.Options o;

    Rounds(Run run) {
        this.run = run;
        this.o = ThreeTier.Options.of(run.typed());
    }

    void run() throws Exception {
        run.mode("sweep");
        List<String> names = o.rounds();
        HttpRound http = names.contains("templates") || names.contains("chain") ? new HttpRound(run, o) : null;
        List<Round> rounds = new ArrayList<>();
        for (String name : names)
            rounds.add(switch (name) {
                case "templates" -> new Templates(run, o, http);
                case "inserts" -> new Inserts(run, o);
                case "chain" -> new ChainRound(run, o, http);
                default -> throw new IllegalArgumentException("unknown round " + name);
            });
        List<String> cells = new ArrayList<>();
        for (Round r : rounds) cells.addAll(r.cells());
        run.variants(cells);
        run.measurement(o.warmup(), o.measure(), o.forks(), "jvm-fork"); // a fork: fresh server JVMs and databases
        ObjectNode notes = run.notes();
        notes.put("rounds", String.join(",", names));
        notes.put("loadDriver", "Hyperfoil 0.25.2 (io.hyperfoil:hyperfoil-http) in its own JVM (scripts/loaddriver/LoadDriver.java); YAML in load/");
        notes.put("httpModels", "saturation: a closed model, --template-users or --chain-users users looping for --measure s after --warmup s; "
                + "capacity: an open model (constant rate, latency from the scheduled start), the largest rate with p99 <= --slo-ms and no errors, "
                + switch (o.openRates()) {
                    case "search" -> "searched by doubling multiples of 1/8 of the saturation throughput, then bisecting";
                    case "none" -> "not measured in this run (--open-rates none)";
                    default -> "read from fixed fractions " + o.openRates() + " of the saturation throughput (a lower bound when all were met)";
                });
        for (Round r : rounds) r.describe(notes);
        run.writeManifest();
        if (http != null) HttpLoad.prepare(run, Params.hostsOf(o.placement(), "driver"));
        // a round: each of its cells' forks, a warm-up and a window apiece and their servers' start (some 20 s)
        run.progress().plan("round", rounds.size(), cells.size() * o.forks() * (o.warmup() + o.measure() + 20));
        try {
            for (int i = 0; i < rounds.size(); i++) {
                run.progress().say("round " + names.get(i));
                rounds.get(i).run();
                run.writeManifest();
                run.progress().unitDone();
            }
        } finally {
            if (http != null) http.close();
        }
        if (run.profiling() && (http == null || !http.costMeasured()))
            notes.put("profilingCost", http == null ? "not measured: what recording costs is measured on an HTTP round (templates or chain)"
                    : "not measured: no HTTP cell carried a rate to measure it at (--open-rates none, or no rate met the SLO)");
        run.writeManifest();
    }
}
