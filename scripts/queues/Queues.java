///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS com.lmax:disruptor:4.0.0
//SOURCES Handoff.java Producer.java QueueTransport.java DisruptorTransport.java WorkSharingConsumer.java QueuesFork.java
//SOURCES ../harness/src/perfkit/harness/os/*.java ../harness/src/perfkit/harness/measure/*.java ../harness/src/perfkit/harness/record/*.java ../harness/src/perfkit/harness/process/*.java ../harness/src/perfkit/harness/cli/*.java ../harness/src/perfkit/harness/run/*.java ../harness/src/perfkit/harness/remote/*.java ../harness/src/perfkit/harness/db/*.java
//DESCRIPTION ArrayBlockingQueue with 1, 3 and 5 competing consumers vs the LMAX Disruptor
package perfkit.queues;

import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.cli.Cli;
import perfkit.harness.cli.Opt;
import perfkit.harness.cli.Params;
import perfkit.harness.os.Ssh;
import perfkit.harness.remote.RemoteJvm;
import perfkit.harness.run.Forks;
import perfkit.harness.run.ProfilingCost;
import perfkit.harness.run.Run;
import perfkit.harness.record.RunLayout;
import perfkit.harness.run.ScriptJvm;
import perfkit.harness.run.Study;
import perfkit.harness.run.Table;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One producer hands trivial events to 1, 3 or 5 consumers through an ArrayBlockingQueue (consumers compete
 * with poll(100 ms), as in the original write-up) or through the LMAX Disruptor, under each of its wait
 * strategies. A cell is a variant under one wait strategy ({@code disruptor-work-3/yielding}; the queue has no
 * wait strategy, so its cells are the variants). Each repetition is a fresh JVM per cell; forks of different
 * cells are interleaved so slow drift on the host hits them all alike.
 */
public class Queues {
    static final List<String> VARIANTS = List.of("abq-1", "abq-3", "abq-5", "disruptor-1",
            "disruptor-shard-3", "disruptor-shard-5", "disruptor-work-3", "disruptor-work-5");
    static final List<String> WAIT_STRATEGIES = List.of("blocking", "yielding", "busy-spin", "sleeping");
    static final String FULL_STRATEGIES = "blocking,yielding,busy-spin", QUICK_STRATEGIES = "blocking,yielding";
    /** Ring and queue size cap: the ring is rounded up to a power of two, and 2^30 is the largest one an int holds. */
    static final long MAX_CAPACITY = 1L << 30;
    /** Above this a period is under 10 ns, less than reading the clock: no schedule could be held. */
    static final long MAX_RATE = 100_000_000;

    // the options, each declared once: the Cli lists them, and Options reads each by its constant, never by name
    static final Opt<List<String>> VARIANTS_OPT = Opt.choices("variants", VARIANTS, String.join(",", VARIANTS), null, "variants to run, comma-separated");
    static final Opt<Integer> FORKS = Opt.integer("forks", 3, 1L, 1, 1000, "JVM forks (repetitions) per cell").map(Math::toIntExact);
    static final Opt<Double> WARMUP = Opt.seconds("warmup", 5, 1.0, 0, "warm-up per fork in seconds, excluded from results");
    static final Opt<Double> MEASURE = Opt.seconds("measure", 10, 2.0, 0.1, "measurement window per fork in seconds");
    static final Opt<Long> RATE = Opt.integer("rate", 0, null, 0, MAX_RATE, "fixed-rate mode: events/s published on a schedule, recording latency from the intended publish time (0 = as fast as possible)");
    static final Opt<Integer> CAPACITY = Opt.integer("capacity", 65536, null, 2, MAX_CAPACITY, "queue capacity and ring size (ring rounded up to a power of two)").map(Math::toIntExact);
    static final Opt<List<String>> WAIT_STRATEGY = Opt.choices("wait-strategy", WAIT_STRATEGIES, FULL_STRATEGIES, QUICK_STRATEGIES, "how Disruptor consumers wait, comma-separated; each Disruptor variant runs under each");
    static final Opt<List<String>> FORK_JVM_ARGS = Opt.jvmOptions("fork-jvm-args", "-Xms512m -Xmx512m", "JVM options of each fork, space-separated");
    static final Opt<Opt.Switch> CALIBRATION = Opt.choice("calibration", Opt.Switch.class, Opt.Switch.ON, "throughput mode: also run a minimal 1P1C program (scripts/queues/Minimal1P1C.java, no harness) "
            + "beside each 1-consumer cell, interleaved with its forks, so the run shows what its harness costs (calibration.csv)");
    static final Opt<Boolean> KEEP_WARMUP = Opt.flag("keep-warmup", "with --rate: also write warm-up intervals to the latency logs (excluded by default)");

    static final Cli CLI = new Cli("queues", "ArrayBlockingQueue with 1, 3 and 5 competing consumers vs the LMAX Disruptor:\n"
            + "events per second from one producer as fast as it can go, or end-to-end latency at a fixed --rate.\n"
            + "Each Disruptor variant runs under each --wait-strategy; a cell is <variant>/<strategy> (the queue's cells are its variants).")
            .with(VARIANTS_OPT, FORKS, WARMUP, MEASURE, RATE, CAPACITY, WAIT_STRATEGY, FORK_JVM_ARGS, CALIBRATION, KEEP_WARMUP)
            .rule(p -> KEEP_WARMUP.in(p) && RATE.in(p) == 0 ? "--keep-warmup needs --rate (latency is recorded only at a fixed rate)" : null)
            // every fork, and the minimal program beside it, on another host (--on puts them there too)
            .place(List.of("forks"))
            // the forks and the minimal program beside them both run on --java (blank: the run's own)
            .rule(p -> !p.placement().containsKey("forks") ? null
                    : RemoteJvm.problem("forks", p.placement().get("forks"), Cli.JAVA.in(p).isBlank() ? ScriptJvm.scriptJava() : Cli.JAVA.in(p)));

    public static void main(String[] args) {
        Study.main(args, CLI, Queues.class, Queues::plan, QueuesFork::measure);
    }

    // ---- parent: plan the forks, collect their results ------------------------------------------------

    /** One measured cell: a variant, under a wait strategy when it is a Disruptor one ("" for the queue). */
    record Cell(String name, String variant, String waitStrategy) {
        /** One producer, one consumer: the topology the minimal program has too. */
        boolean hasMinimal() { return variant.equals("abq-1") || variant.equals("disruptor-1"); }

        static List<Cell> of(List<String> variants, List<String> strategies) {
            List<Cell> cells = new ArrayList<>();
            for (String v : variants) {
                if (v.startsWith("abq")) cells.add(new Cell(v, v, ""));
                else for (String s : strategies) cells.add(new Cell(v + "/" + s, v, s));
            }
            return cells;
        }
    }

    /** A run's options, read once from the command line's checked values, each by its declaration. */
    record Options(List<Cell> cells, List<String> waitStrategies, int forks, double warmup, double measure, long rate, int capacity,
                   List<String> forkJvmArgs, boolean calibration, boolean keepWarmup, boolean quick, Ssh forksHost) {
        static Options of(Params p) {
            return new Options(Cell.of(VARIANTS_OPT.in(p), WAIT_STRATEGY.in(p)), WAIT_STRATEGY.in(p), FORKS.in(p), WARMUP.in(p), MEASURE.in(p),
                    RATE.in(p), CAPACITY.in(p), FORK_JVM_ARGS.in(p), CALIBRATION.in(p) == Opt.Switch.ON, KEEP_WARMUP.in(p), Cli.QUICK.in(p),
                    p.placement().get("forks"));
        }

        /** Whether a minimal program runs beside the 1-consumer cells: at full speed, with calibration on, when there is one. */
        boolean calibrates() { return rate == 0 && calibration && cells.stream().anyMatch(Cell::hasMinimal); }

        /** Where the forks run: here, or on the host --place forks (or --on) names. */
        Forks.Host where() { return forksHost == null ? Forks.Host.HERE : RemoteJvm.forkHost("forks", forksHost); }

        /** What one fork of {@code cell} measures; a plain one is left out of --profile, to measure what recording costs. */
        QueuesFork.Spec spec(Cell cell, int fork, boolean profiled) {
            return new QueuesFork.Spec(cell.name(), cell.variant(), cell.waitStrategy(), fork, rate, warmup, measure, capacity, keepWarmup, profiled);
        }

        /** With --profile at full speed, the cell whose forks each have a plain twin: the first 1-consumer cell, else the first. */
        Cell profilingCostCell(boolean profile) {
            if (!profile || rate > 0) return null;
            return cells.stream().filter(Cell::hasMinimal).findFirst().orElse(cells.get(0));
        }
    }

    static void plan(Run run) throws Exception {
        Options o = Options.of(run.typed());
        List<Cell> cells = o.cells();
        double warmup = o.warmup(), measure = o.measure();
        long rate = o.rate();
        run.mode(rate > 0 ? "fixed-rate" : "throughput");
        run.variants(cells.stream().map(Cell::name).toList());
        run.measurement(warmup, measure, o.forks(), "jvm-fork");
        describe(run.notes(), o);

        List<String> jvmArgs = o.forkJvmArgs();
        Map<String, List<Double>> perCell = new LinkedHashMap<>();
        boolean calibrate = o.calibrates();
        ScriptJvm minimal = calibrate ? ScriptJvm.prepare(RunLayout.kitRoot().resolve(MINIMAL_SCRIPT), "perfkit.queues.Minimal1P1C",
                "the minimal 1P1C program", run.dir().resolve("logs")).on(Cli.JAVA.in(run.typed())) : null;
        Cell costCell = o.profilingCostCell(run.profiling());
        if (run.profiling() && costCell == null) run.notes().put("profilingCost", "not measured: a plain twin is run at full speed, where a cost "
                + "shows as fewer events per second; at a fixed --rate it would need a CPU reading these forks do not take");
        if (costCell != null) run.notes().put("profilingCost", "each fork of " + costCell.name() + " has a plain twin, the same spec in a JVM "
                + "that records nothing, run next to it; profiling.csv holds both rates per fork");
        if (calibrate) run.notes().put("calibration", "each 1-consumer cell's forks alternate with a minimal program of the same topology ("
                + MINIMAL_SCRIPT + ": the same ring or queue size, warm-up, window, fork JVM options and java; no harness, no checksum, the main thread "
                + "asleep); calibration.csv holds both rates per fork; a harness within 10% of it adds nothing the result depends on");
        try (Table throughput = new Table(run, "throughput.csv", "events per second per cell and fork over the measurement window, "
                + "and the delivery check over the whole fork",
                "cell", "variant", "wait_strategy", "fork", "consumers", "events", "seconds", "events_per_s", "produced",
                "producer_bytes_per_event", "target_rate", "achieved_rate", "produced_total", "consumed_total", "exactly_once",
                "scheduled_in_window", "latency_samples");
             Table consumers = new Table(run, "consumers.csv", "events handled by each consumer per cell and fork: in the window, and over the whole fork",
                     "cell", "variant", "wait_strategy", "fork", "consumer", "events", "events_total");
             Table calibration = calibrate ? new Table(run, "calibration.csv", "the harness beside a minimal program of the same topology: "
                     + "events per second of each 1-consumer cell's fork and of the minimal program run next to it",
                     "cell", "variant", "wait_strategy", "fork", "harness_events_per_s", "minimal_events_per_s", "harness_over_minimal",
                     "minimal_exactly_once") : null;
             Table profiling = costCell != null ? new Table(run, "profiling.csv", "what --profile costs: events per second of one cell's profiled "
                     + "fork and of a plain fork of the same spec run next to it", "cell", "variant", "wait_strategy", "fork", "profiled_events_per_s",
                     "plain_events_per_s", "profiled_over_plain") : null) {
            // a cell's fork: its JVM's start (about 2 s) and window, and as long again for the minimal program or plain twin beside it
            long besides = (calibrate ? cells.stream().filter(Cell::hasMinimal).count() : 0) + (costCell != null ? 1 : 0);
            run.progress().plan("cell", o.forks() * cells.size(), o.forks() * ((cells.size() + besides) * (warmup + measure + 2)));
            for (int fork = 1; fork <= o.forks(); fork++) {
                for (Cell cell : cells) {
                    // the minimal program goes first on even forks, so drift on the host favours neither
                    Minimal.Result before = calibration != null && cell.hasMinimal() && fork % 2 == 0
                            ? Minimal.run(run, minimal, o.forksHost(), cell, fork, jvmArgs, warmup, measure, o.capacity()) : null;
                    // the cost cell's fork has a plain twin; which goes first alternates by fork, so drift on the host favours neither
                    Cell measured = cell;
                    int f = fork;
                    ProfilingCost.Pair<QueuesFork.Result> pair = cell == costCell
                            ? ProfilingCost.pair(run, fork, (recorded, k) -> fork(run, o, measured, f, jvmArgs, recorded)) : null;
                    QueuesFork.Result r = pair != null ? pair.recorded() : fork(run, o, cell, fork, jvmArgs, true);
                    Double plain = pair != null ? pair.plain().eventsPerSecond() : null;
                    if (plain != null) {
                        profiling.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                                .set("fork", fork).set("profiled_events_per_s", r.eventsPerSecond()).set("plain_events_per_s", plain)
                                .set("profiled_over_plain", r.eventsPerSecond() / plain));
                        run.progress().say(String.format(Locale.ROOT, "%s fork %d: profiled %,.0f events/s, plain %,.0f (%.2fx)",
                                cell.name(), fork, r.eventsPerSecond(), plain, r.eventsPerSecond() / plain));
                    }
                    Minimal.Result m = calibration != null && cell.hasMinimal() && before == null
                            ? Minimal.run(run, minimal, o.forksHost(), cell, fork, jvmArgs, warmup, measure, o.capacity()) : before;
                    if (m != null) {
                        double harness = r.eventsPerSecond();
                        calibration.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                                .set("fork", fork).set("harness_events_per_s", harness).set("minimal_events_per_s", m.eventsPerSecond())
                                .set("harness_over_minimal", harness / m.eventsPerSecond()).set("minimal_exactly_once", m.exactlyOnce()));
                        run.progress().say(String.format(Locale.ROOT, "%s fork %d: harness %,.0f events/s, minimal program %,.0f (%.2fx)",
                                cell.name(), fork, harness, m.eventsPerSecond(), harness / m.eventsPerSecond()));
                    }
                    throughput.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                            .set("fork", fork).set("consumers", QueuesFork.consumersOf(cell.variant()))
                            .set("events", r.events()).set("seconds", r.seconds())
                            .set("events_per_s", r.eventsPerSecond()).set("produced", r.produced())
                            .set("producer_bytes_per_event", r.producerBytesPerEvent())
                            .set("target_rate", rate).set("achieved_rate", r.achievedRate())
                            .set("produced_total", r.producedTotal()).set("consumed_total", r.consumedTotal())
                            .set("exactly_once", r.exactlyOnce())
                            .set("scheduled_in_window", r.scheduledInWindow()).set("latency_samples", r.latencySamples()));
                    for (int c = 0; c < r.consumerEvents().size(); c++)
                        consumers.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                                .set("fork", fork).set("consumer", c + 1).set("events", r.consumerEvents().get(c)).set("events_total", r.consumerEventsTotal().get(c)));
                    perCell.computeIfAbsent(cell.name(), v -> new ArrayList<>()).add(r.eventsPerSecond());
                    for (String reason : invalidReasons(cell.name(), fork, rate, r)) run.invalid(reason);
                    run.progress().unitDone();
                }
            }
        }
        printSummary(run, perCell);
    }

    /** One fork of {@code cell}; unprofiled, it is the plain twin of the profiled one: the same spec, left out of --profile. */
    private static QueuesFork.Result fork(Run run, Options o, Cell cell, int fork, List<String> jvmArgs, boolean profiled) throws Exception {
        return run.forks().on(o.where(), cell.name() + "/fork" + fork + (profiled ? "" : "/plain"), jvmArgs, o.spec(cell, fork, profiled),
                o.warmup() + o.measure(), phase -> {}, QueuesFork.Result.class).result();
    }

    static final String MINIMAL_SCRIPT = "scripts/queues/Minimal1P1C.java";

    /** The calibration: {@link Minimal1P1C} in a JVM of its own, as the cell's fork would run. */
    static final class Minimal {
        record Result(double eventsPerSecond, boolean exactlyOnce) {}

        static Result run(Run run, ScriptJvm program, Ssh host, Cell cell, int fork, List<String> jvmArgs, double warmup, double measure,
                          int capacity) throws Exception {
            String name = "minimal." + cell.name().replace('/', '.') + ".fork" + fork;
            Path log = run.dir().resolve("logs").resolve(name + ".log");
            run.progress().phase(cell.name() + " fork " + fork + ": the minimal program", warmup + measure);
            List<String> args = List.of(cell.variant().startsWith("abq") ? "abq" : "disruptor", cell.waitStrategy().isEmpty() ? "-" : cell.waitStrategy(),
                    Double.toString(warmup), Double.toString(measure), Integer.toString(capacity));
            double timeoutS = warmup + measure + QueuesFork.DRAIN_TIMEOUT_S + 30;
            if (host != null) onHost(run, program, host, name, jvmArgs, args, log, timeoutS);
            else {
                Process p = program.start(run, name, jvmArgs, args, log, "TERM", 5, List.of());
                try {
                    if (!p.waitFor((long) (timeoutS * 1000), TimeUnit.MILLISECONDS))
                        throw new IllegalStateException("the minimal program for " + name + " did not finish; see logs/" + name + ".log");
                } finally {
                    ScriptJvm.stop(run, p, 5);
                }
            }
            run.addFile("logs/" + name + ".log", "log", "the minimal 1P1C program's output (" + cell.name() + ", fork " + fork + ")");
            String line = Files.readAllLines(log).stream().filter(l -> l.startsWith("events_per_s=")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("the minimal program for " + cell.name() + " fork " + fork + " printed no result; see logs/" + name + ".log"));
            Map<String, String> f = new LinkedHashMap<>();
            for (String kv : line.trim().split(" ")) f.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            return new Result(Double.parseDouble(f.get("events_per_s")), f.get("produced").equals(f.get("consumed")));
        }

        /** The minimal program on the forks' host, under that part's agent there: its output lands in {@code log} here. */
        private static void onHost(Run run, ScriptJvm program, Ssh host, String name, List<String> jvmArgs, List<String> args, Path log,
                                   double timeoutS) throws Exception {
            Files.createDirectories(log.getParent());
            try (var out = Files.newBufferedWriter(log)) {
                RemoteJvm jvm = RemoteJvm.program(run, "forks", name, host, jvmArgs, program, args, Map.of(), Map.of(),
                        line -> { synchronized (out) { try { out.write(line); out.newLine(); } catch (java.io.IOException e) { throw new java.io.UncheckedIOException(e); } } });
                try {
                    Integer code = jvm.exitCode(timeoutS);
                    if (code == null) throw new IllegalStateException("the minimal program for " + name + " on " + host + " did not finish; see logs/" + name + ".log");
                } finally {
                    jvm.closeBesideForks(run, "forks");
                }
            }
        }
    }

    /** Why one fork's result cannot be trusted; empty when it can. */
    static List<String> invalidReasons(String cell, int fork, long rate, QueuesFork.Result r) {
        List<String> reasons = new ArrayList<>();
        if (rate > 0 && r.achievedRate() < 0.99 * rate)
            reasons.add(String.format(Locale.ROOT, "%s fork %d: producer held only %.0f of %d events/s", cell, fork, r.achievedRate(), rate));
        if (!r.exactlyOnce())
            reasons.add(String.format(Locale.ROOT, "%s fork %d: consumers took %d events for %d produced (lost, duplicated or not drained in %.0f s)",
                    cell, fork, r.consumedTotal(), r.producedTotal(), QueuesFork.DRAIN_TIMEOUT_S));
        if (rate > 0 && !r.latencySamples().equals(r.scheduledInWindow()))
            reasons.add(String.format(Locale.ROOT, "%s fork %d: %d of %d events scheduled in the window have no latency sample (not sent or not delivered in time)",
                    cell, fork, r.scheduledInWindow() - r.latencySamples(), r.scheduledInWindow()));
        return reasons;
    }

    static void describe(ObjectNode notes, Options o) {
        long rate = o.rate();
        notes.put("cells", "<variant>/<wait strategy> for Disruptor variants (e.g. disruptor-work-3/yielding), the variant alone for the queue; "
                + "tables carry variant and wait_strategy as their own columns");
        notes.put("waitStrategies", "Disruptor wait strategies run: " + String.join(", ", o.waitStrategies())
                + "; blocking (BlockingWaitStrategy, the DSL default) is what the original used"
                + (o.quick() && String.join(",", o.waitStrategies()).equals(QUICK_STRATEGIES)
                ? "; quick scale leaves out busy-spin to stay near a minute, the full run adds it" : ""));
        notes.put("abqProducer", "allocates one event object per put, as the original did; blocking put()");
        notes.put("abqConsumers", "compete on one ArrayBlockingQueue with poll(100 ms), as the original did");
        notes.put("disruptorProducer", "claims a preallocated slot (next/get/publish); no allocation per event (see producer_bytes_per_event)");
        notes.put("disruptor-1", "one event handler (BatchEventProcessor): the single-consumer case of both designs below");
        notes.put("disruptor-shard-N", "a sharded broadcast: N handlers each read every slot and handle only those with sequence % N == its index; "
                + "every event is handled once, but each handler still waits for and walks every event, and the slowest handler holds back the producer");
        notes.put("disruptor-work-N", "work-sharing: N consumers claim the next sequence from one shared counter (CAS) and handle only what they claimed, "
                + "the design of Disruptor 3's WorkerPool (removed in 4.0), rebuilt as custom EventProcessors; each consumer's gating sequence stays "
                + "below the sequence it claimed until it has handled it, so the producer never overwrites an unhandled slot");
        notes.put("deliveryCheck", "after the window the producer stops and consumers drain (at most " + (long) QueuesFork.DRAIN_TIMEOUT_S + " s); every event produced in the fork must be consumed exactly once "
                + "(counts agree, and so do checksums: of the events' values on the queue path, of their ring sequences on the Disruptor path, "
                + "so a Disruptor consumer reads nothing from the slot it handles, like the minimal program's), else the run is invalid");
        notes.put("eventValue", "a xorshift pseudo-random long per event, so neither path pays for java.util.Random's CAS");
        notes.put("forkOrder", "interleaved: fork 1 of every cell, then fork 2, ...");
        if (rate > 0) {
            notes.put("latency", "per cell and fork: series <cell> (end to end), intended (corrected) or actual (uncorrected) publish -> consumed; "
                    + "series <cell>/lateness, the producer's own lateness: actual minus intended publish time (both files hold the same values)");
            notes.put("latencyWindow", "samples are cut by intended publish time: events scheduled inside the window are measured, however late they arrive; "
                    + "the producer stops at the window's end and the logs close after the drain");
            notes.put("fixedRateProducer", "parks until 100 us before each deadline, then spins (Linux timer slack of ~50 us would make a later wake-up late); "
                    + "at rates above ~10k/s the producer therefore spins most of the time on one core");
        } else {
            notes.put("latency", "not recorded in throughput mode (there is no schedule to be late against); use --rate");
        }
    }

    static void printSummary(Run run, Map<String, List<Double>> perCell) {
        run.progress().clear();
        System.err.printf(Locale.ROOT, "%n%-28s %6s %16s %16s %16s%n", "cell", "forks", "mean events/s", "min", "max");
        perCell.forEach((v, xs) -> System.err.printf(Locale.ROOT, "%-28s %6d %,16.0f %,16.0f %,16.0f%n", v, xs.size(),
                xs.stream().mapToDouble(d -> d).average().orElse(Double.NaN),
                xs.stream().mapToDouble(d -> d).min().orElse(Double.NaN), xs.stream().mapToDouble(d -> d).max().orElse(Double.NaN)));
    }
}
