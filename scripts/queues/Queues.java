///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
//DEPS com.lmax:disruptor:4.0.0
//SOURCES ../harness/src/perfkit/harness/*.java
//DESCRIPTION ArrayBlockingQueue with 1, 3 and 5 competing consumers vs the LMAX Disruptor
package perfkit.queues;

import com.lmax.disruptor.AlertException;
import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventProcessor;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.TimeoutException;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import com.lmax.disruptor.util.DaemonThreadFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import perfkit.harness.Cli;
import perfkit.harness.Fork;
import perfkit.harness.LatencyLog;
import perfkit.harness.LatencyRecorder;
import perfkit.harness.Params;
import perfkit.harness.Run;
import perfkit.harness.RunLayout;
import perfkit.harness.ScriptJvm;
import perfkit.harness.Study;
import perfkit.harness.Sys;
import perfkit.harness.Table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

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
    /** How long a fork waits, after its window, for the producer to finish the window's schedule and for consumers to drain. */
    static final double DRAIN_TIMEOUT_S = 10;
    /** Fixed rate: the latency window starts this long after it is set, so no in-window sample is sorted before the logs know it. */
    static final long WINDOW_LEAD_NS = 50_000_000;

    static final Cli CLI = new Cli("queues", "ArrayBlockingQueue with 1, 3 and 5 competing consumers vs the LMAX Disruptor:\n"
            + "events per second from one producer as fast as it can go, or end-to-end latency at a fixed --rate.\n"
            + "Each Disruptor variant runs under each --wait-strategy; a cell is <variant>/<strategy> (the queue's cells are its variants).")
            .choices("variants", VARIANTS, String.join(",", VARIANTS), "variants to run, comma-separated")
            .integer("forks", 3, 1L, 1, 1000, "JVM forks (repetitions) per cell")
            .seconds("warmup", 5, 1.0, "warm-up per fork in seconds, excluded from results")
            .seconds("measure", 10, 2.0, 0.1, "measurement window per fork in seconds")
            .integer("rate", 0, null, 0, MAX_RATE, "fixed-rate mode: events/s published on a schedule, recording latency from the intended publish time (0 = as fast as possible)")
            .integer("capacity", 65536, null, 2, MAX_CAPACITY, "queue capacity and ring size (ring rounded up to a power of two)")
            .text("wait-strategy", FULL_STRATEGIES, QUICK_STRATEGIES,
                    "how Disruptor consumers wait: one or more of " + String.join(", ", WAIT_STRATEGIES) + ", comma-separated; each Disruptor variant runs under each")
            .rule(p -> {
                List<String> s = p.list("wait-strategy");
                return !s.isEmpty() && WAIT_STRATEGIES.containsAll(s) ? null
                        : "option --wait-strategy expects one or more of " + String.join(", ", WAIT_STRATEGIES) + ", got '" + p.text("wait-strategy") + "'";
            })
            .jvmOptions("fork-jvm-args", "-Xms512m -Xmx512m", "JVM options of each fork, space-separated")
            .choice("calibration", List.of("on", "off"), "on", "throughput mode: also run a minimal 1P1C program (scripts/queues/Minimal1P1C.java, no harness) "
                    + "beside each 1-consumer cell, interleaved with its forks, so the run shows what its harness costs (calibration.csv)")
            .flag("keep-warmup", "with --rate: also write warm-up intervals to the latency logs (excluded by default)")
            .rule(p -> p.flag("keep-warmup") && p.integer("rate") == 0 ? "--keep-warmup needs --rate (latency is recorded only at a fixed rate)" : null);

    public static void main(String[] args) {
        Study.main(args, CLI, Queues.class, Queues::plan, Queues::measure);
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

    static void plan(Run run) throws Exception {
        Params p = run.typed();
        List<Cell> cells = Cell.of(p.list("variants"), p.list("wait-strategy").stream().distinct().toList());
        long forks = p.integer("forks");
        double warmup = p.seconds("warmup"), measure = p.seconds("measure");
        long rate = p.integer("rate");
        run.mode(rate > 0 ? "fixed-rate" : "throughput");
        run.variants(cells.stream().map(Cell::name).toList());
        run.measurement(warmup, measure, forks, "jvm-fork");
        describe(run.notes(), rate, p);

        List<String> jvmArgs = Sys.jvmArgs(p.text("fork-jvm-args"));
        Map<String, List<Double>> perCell = new LinkedHashMap<>();
        boolean calibrate = rate == 0 && p.text("calibration").equals("on") && cells.stream().anyMatch(Cell::hasMinimal);
        ScriptJvm minimal = calibrate ? ScriptJvm.prepare(RunLayout.kitRoot().resolve(MINIMAL_SCRIPT), "perfkit.queues.Minimal1P1C",
                "the minimal 1P1C program", run.dir().resolve("logs")) : null;
        if (calibrate) run.notes().put("calibration", "each 1-consumer cell's forks alternate with a minimal program of the same topology ("
                + MINIMAL_SCRIPT + ": the same ring or queue size, warm-up, window and fork JVM options; no harness, no checksum, the main thread "
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
                     "minimal_exactly_once") : null) {
            for (int fork = 1; fork <= forks; fork++) {
                for (Cell cell : cells) {
                    Map<String, String> fp = new LinkedHashMap<>(run.params());
                    fp.put("cell", cell.name());
                    fp.put("variant", cell.variant());
                    fp.put("strategy", cell.waitStrategy());
                    fp.put("fork", String.valueOf(fork));
                    // the minimal program goes first on even forks, so drift on the host favours neither
                    Minimal.Result before = calibration != null && cell.hasMinimal() && fork % 2 == 0
                            ? Minimal.run(run, minimal, cell, fork, jvmArgs, warmup, measure, p.intValue("capacity")) : null;
                    ObjectNode r = run.fork(cell.name() + "/fork" + fork, jvmArgs, fp, warmup + measure);
                    Minimal.Result m = calibration != null && cell.hasMinimal() && before == null
                            ? Minimal.run(run, minimal, cell, fork, jvmArgs, warmup, measure, p.intValue("capacity")) : before;
                    if (m != null) {
                        double harness = r.get("eventsPerSecond").asDouble();
                        calibration.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                                .set("fork", fork).set("harness_events_per_s", harness).set("minimal_events_per_s", m.eventsPerSecond())
                                .set("harness_over_minimal", harness / m.eventsPerSecond()).set("minimal_exactly_once", m.exactlyOnce()));
                        run.progress().say(String.format(Locale.ROOT, "%s fork %d: harness %,.0f events/s, minimal program %,.0f (%.2fx)",
                                cell.name(), fork, harness, m.eventsPerSecond(), harness / m.eventsPerSecond()));
                    }
                    double achieved = r.get("achievedRate").asDouble();
                    boolean exactlyOnce = r.get("exactlyOnce").asBoolean();
                    throughput.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                            .set("fork", fork).set("consumers", consumersOf(cell.variant()))
                            .set("events", r.get("events").asLong()).set("seconds", r.get("seconds").asDouble())
                            .set("events_per_s", r.get("eventsPerSecond").asDouble()).set("produced", r.get("produced").asLong())
                            .set("producer_bytes_per_event", r.get("producerBytesPerEvent").asDouble())
                            .set("target_rate", rate).set("achieved_rate", achieved)
                            .set("produced_total", r.get("producedTotal").asLong()).set("consumed_total", r.get("consumedTotal").asLong())
                            .set("exactly_once", exactlyOnce)
                            .set("scheduled_in_window", rate > 0 ? r.get("scheduledInWindow").asLong() : null)
                            .set("latency_samples", rate > 0 ? r.get("latencySamples").asLong() : null));
                    int c = 0;
                    JsonNode totals = r.get("consumerEventsTotal");
                    for (JsonNode n : r.get("consumerEvents")) {
                        consumers.write(Table.row().set("cell", cell.name()).set("variant", cell.variant()).set("wait_strategy", cell.waitStrategy())
                                .set("fork", fork).set("consumer", c + 1).set("events", n.asLong()).set("events_total", totals.get(c).asLong()));
                        c++;
                    }
                    perCell.computeIfAbsent(cell.name(), v -> new ArrayList<>()).add(r.get("eventsPerSecond").asDouble());
                    for (String reason : invalidReasons(cell.name(), fork, rate, r)) run.invalid(reason);
                }
            }
        }
        printSummary(run, perCell);
    }

    static final String MINIMAL_SCRIPT = "scripts/queues/Minimal1P1C.java";

    /** The calibration: {@link Minimal1P1C} in a JVM of its own, as the cell's fork would run. */
    static final class Minimal {
        record Result(double eventsPerSecond, boolean exactlyOnce) {}

        static Result run(Run run, ScriptJvm program, Cell cell, int fork, List<String> jvmArgs, double warmup, double measure,
                          int capacity) throws Exception {
            String name = "minimal." + cell.name().replace('/', '.') + ".fork" + fork;
            Path log = run.dir().resolve("logs").resolve(name + ".log");
            run.progress().phase(cell.name() + " fork " + fork + ": the minimal program", warmup + measure);
            Process p = program.start(run, name, jvmArgs, List.of(cell.variant().startsWith("abq") ? "abq" : "disruptor",
                    cell.waitStrategy().isEmpty() ? "-" : cell.waitStrategy(), Double.toString(warmup), Double.toString(measure),
                    Integer.toString(capacity)), log, "TERM", 5, List.of());
            try {
                if (!p.waitFor((long) ((warmup + measure + DRAIN_TIMEOUT_S + 30) * 1000), TimeUnit.MILLISECONDS))
                    throw new IllegalStateException("the minimal program for " + cell.name() + " fork " + fork + " did not finish; see logs/" + name + ".log");
            } finally {
                ScriptJvm.stop(run, p, 5);
            }
            run.addFile("logs/" + name + ".log", "log", "the minimal 1P1C program's output (" + cell.name() + ", fork " + fork + ")");
            String line = Files.readAllLines(log).stream().filter(l -> l.startsWith("events_per_s=")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("the minimal program for " + cell.name() + " fork " + fork + " printed no result; see logs/" + name + ".log"));
            Map<String, String> f = new LinkedHashMap<>();
            for (String kv : line.trim().split(" ")) f.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            return new Result(Double.parseDouble(f.get("events_per_s")), f.get("produced").equals(f.get("consumed")));
        }
    }

    /** Why one fork's result cannot be trusted; empty when it can. */
    static List<String> invalidReasons(String cell, int fork, long rate, JsonNode r) {
        List<String> reasons = new ArrayList<>();
        double achieved = r.get("achievedRate").asDouble();
        if (rate > 0 && achieved < 0.99 * rate)
            reasons.add(String.format(Locale.ROOT, "%s fork %d: producer held only %.0f of %d events/s", cell, fork, achieved, rate));
        if (!r.get("exactlyOnce").asBoolean())
            reasons.add(String.format(Locale.ROOT, "%s fork %d: consumers took %d events for %d produced (lost, duplicated or not drained in %.0f s)",
                    cell, fork, r.get("consumedTotal").asLong(), r.get("producedTotal").asLong(), DRAIN_TIMEOUT_S));
        if (rate > 0 && r.get("latencySamples").asLong() != r.get("scheduledInWindow").asLong())
            reasons.add(String.format(Locale.ROOT, "%s fork %d: %d of %d events scheduled in the window have no latency sample (not sent or not delivered in time)",
                    cell, fork, r.get("scheduledInWindow").asLong() - r.get("latencySamples").asLong(), r.get("scheduledInWindow").asLong()));
        return reasons;
    }

    static void describe(ObjectNode notes, long rate, Params p) {
        notes.put("cells", "<variant>/<wait strategy> for Disruptor variants (e.g. disruptor-work-3/yielding), the variant alone for the queue; "
                + "tables carry variant and wait_strategy as their own columns");
        notes.put("waitStrategies", "Disruptor wait strategies run: " + String.join(", ", p.list("wait-strategy").stream().distinct().toList())
                + "; blocking (BlockingWaitStrategy, the DSL default) is what the original used"
                + (p.flag("quick") && p.text("wait-strategy").equals(QUICK_STRATEGIES)
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
        notes.put("deliveryCheck", "after the window the producer stops and consumers drain (at most " + (long) DRAIN_TIMEOUT_S + " s); every event produced in the fork must be consumed exactly once "
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

    static int consumersOf(String variant) {
        return Integer.parseInt(variant.substring(variant.lastIndexOf('-') + 1));
    }

    static void printSummary(Run run, Map<String, List<Double>> perCell) {
        run.progress().clear();
        System.err.printf(Locale.ROOT, "%n%-28s %6s %16s %16s %16s%n", "cell", "forks", "mean events/s", "min", "max");
        perCell.forEach((v, xs) -> System.err.printf(Locale.ROOT, "%-28s %6d %,16.0f %,16.0f %,16.0f%n", v, xs.size(),
                xs.stream().mapToDouble(d -> d).average().orElse(Double.NaN),
                xs.stream().mapToDouble(d -> d).min().orElse(Double.NaN), xs.stream().mapToDouble(d -> d).max().orElse(Double.NaN)));
    }

    // ---- fork: one cell, one fresh JVM ----------------------------------------------------------------

    /**
     * What travels: one long, like the minimal program's slot. At a fixed rate a {@link TimedEvent} also carries its
     * intended and actual send times; in throughput mode those 16 bytes would cost about 0.6x of the Disruptor's
     * rate, which there is bound by the producer writing the ring's events (about 2.7 GB/s here at 24 or 40 bytes).
     */
    static class Event {
        long value;
    }

    static final class TimedEvent extends Event {
        long intendedNs, sentNs;
    }

    /** A count written by one thread and read by another, padded away from its neighbours' cache lines. */
    static class PadBefore { long p1, p2, p3, p4, p5, p6, p7; }
    static class CountValue extends PadBefore { long value; long checksum; }
    static final class Counter extends CountValue {
        long q1, q2, q3, q4, q5, q6, q7;
        private static final VarHandle VALUE;
        static {
            try { VALUE = MethodHandles.lookup().findVarHandle(CountValue.class, "value", long.class); }
            catch (ReflectiveOperationException e) { throw new ExceptionInInitializerError(e); }
        }
        /** Single writer: a release store, no atomic read-modify-write. The checksum is written first, so an acquire read of the count sees it. */
        void add(long eventValue) {
            checksum += eventValue;
            VALUE.setRelease(this, value + 1);
        }
        /** Single writer: both totals at once, the checksum first (see add). */
        void set(long count, long checksumSoFar) {
            checksum = checksumSoFar;
            VALUE.setRelease(this, count);
        }
        long get() { return (long) VALUE.getAcquire(this); }
        /** Only meaningful once the writer has stopped; read get() first. */
        long checksum() { return checksum; }
    }

    /**
     * What a consumer does with each event it takes: time it (fixed rate), then count it with its token. The token is
     * what the delivery check sums: the event's value on the queue path, its ring sequence on the Disruptor path. A
     * sequence is unique per event, so sums and counts still catch a lost or doubled event, and a Disruptor consumer
     * in throughput mode reads nothing from the slot: the minimal program's handler does not either, and pulling each
     * slot's cache line over from the producer's core cost the yielding 1P1C cell most of its throughput.
     */
    record Consumer(Counter count, LatencyRecorder recorder) {
        void take(Event e, long token) {
            if (recorder != null && e instanceof TimedEvent t) recorder.record(t.intendedNs, t.sentNs, System.nanoTime());
            count.add(token);
        }
    }

    /** A transport under test: publish from the producer thread, consumers take what they get. */
    interface Transport {
        void start();
        /** Publishes one event and returns its token for the delivery check (see {@link Consumer}). */
        long publish(long value, long intendedNs, long sentNs) throws InterruptedException;
        void stop();
    }

    static void measure(Fork f) throws Exception {
        Params p = f.params();
        String cell = p.text("cell"), variant = p.text("variant");
        int fork = p.intValue("fork"), n = consumersOf(variant);
        long rate = p.integer("rate");
        double warmup = p.seconds("warmup"), measureSeconds = p.seconds("measure");

        LatencyLog e2e = null, lateness = null;
        if (rate > 0) {
            String at = cell + ", fork " + fork + ", " + rate + " events/s";
            e2e = f.latencyLog(cell, cell, fork, "end-to-end latency publish -> consumed, " + at);
            lateness = f.latencyLog(cell, cell + "/lateness", fork, "producer lateness, actual minus intended publish time (the load generator's own delay, "
                    + "not the queue's; corrected and uncorrected hold the same values), " + at);
        }
        Consumer[] consumers = new Consumer[n];
        for (int i = 0; i < n; i++) consumers[i] = new Consumer(new Counter(), e2e == null ? null : e2e.newRecorder());

        int capacity = p.intValue("capacity");
        boolean timed = rate > 0;
        Transport transport = variant.startsWith("abq") ? new QueueTransport(capacity, timed, consumers)
                : new DisruptorTransport(capacity, timed, waitStrategy(p.text("strategy")), variant.startsWith("disruptor-work"), consumers);
        Producer producer = new Producer(transport, rate, lateness == null ? null : lateness.newRecorder());
        transport.start();
        producer.start();

        LongSupplier consumed = () -> { long s = 0; for (Consumer c : consumers) s += c.count().get(); return s; };
        f.phase("warmup", warmup);
        f.await(warmup, consumed);

        long measureNs = (long) (measureSeconds * 1e9), windowStart = System.nanoTime() + WINDOW_LEAD_NS;
        if (rate > 0) {
            // One window by intended time for both logs, starting just after they know it (a sample is sorted when
            // it is recorded); the producer finishes the window's schedule, then stops.
            e2e.window(windowStart, windowStart + measureNs);
            lateness.window(windowStart, windowStart + measureNs);
            producer.stopAtIntended(windowStart + measureNs);
            for (long left; (left = windowStart - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
        }
        long[] c0 = snapshot(consumers);
        long p0 = producer.produced.get(), a0 = producer.allocatedBytes(), t0 = System.nanoTime();
        f.phase("measure", measureSeconds);
        f.await(measureSeconds, consumed);
        long[] c1 = snapshot(consumers);
        long p1 = producer.produced.get(), a1 = producer.stopped() ? -1 : producer.allocatedBytes(), t1 = System.nanoTime();

        f.phase("drain", DRAIN_TIMEOUT_S);
        long drainEnd = System.nanoTime() + (long) (DRAIN_TIMEOUT_S * 1e9);
        if (rate > 0) producer.awaitEnd(drainEnd);
        producer.stop();
        while (consumed.getAsLong() < producer.produced.get() && System.nanoTime() - drainEnd < 0) Thread.sleep(1);
        long consumedTotal = consumed.getAsLong(), producedTotal = producer.produced.get();
        if (e2e != null) { e2e.close(); lateness.close(); } // after the drain: late in-window completions are in
        long checksum = 0;
        for (Consumer c : consumers) checksum += c.count().checksum();
        transport.stop();

        double seconds = (t1 - t0) / 1e9;
        long events = 0;
        ObjectNode r = f.result();
        var perConsumer = r.putArray("consumerEvents");
        var perConsumerTotal = r.putArray("consumerEventsTotal");
        for (int i = 0; i < n; i++) {
            events += c1[i] - c0[i];
            perConsumer.add(c1[i] - c0[i]);
            perConsumerTotal.add(consumers[i].count().get());
        }
        r.put("events", events);
        r.put("seconds", seconds);
        r.put("eventsPerSecond", events / seconds);
        r.put("produced", p1 - p0);
        // fixed rate: the producer stops at the window's end, so divide by the schedule's span, not by the (longer) wait
        r.put("achievedRate", (p1 - p0) / (rate > 0 ? (windowStart + measureNs - t0) / 1e9 : seconds));
        r.put("producerBytesPerEvent", a0 < 0 || a1 < 0 || p1 == p0 ? Double.NaN : (double) (a1 - a0) / (p1 - p0));
        r.put("producedTotal", producedTotal);
        r.put("consumedTotal", consumedTotal);
        r.put("exactlyOnce", producer.stopped() && consumedTotal == producedTotal && checksum == producer.checksum());
        if (rate > 0) {
            r.put("scheduledInWindow", producer.scheduledIn(windowStart, windowStart + measureNs, rate));
            r.put("latencySamples", e2e.measuredCount());
        }
    }

    static long[] snapshot(Consumer[] consumers) {
        long[] s = new long[consumers.length];
        for (int i = 0; i < consumers.length; i++) s[i] = consumers[i].count().get();
        return s;
    }

    static WaitStrategy waitStrategy(String name) {
        return switch (name) {
            case "sleeping" -> new SleepingWaitStrategy();
            case "yielding" -> new YieldingWaitStrategy();
            case "busy-spin" -> new BusySpinWaitStrategy();
            case "blocking" -> new BlockingWaitStrategy();
            default -> throw new IllegalArgumentException("unknown wait strategy '" + name + "'");
        };
    }

    /** The single producer: as fast as it can, or on a fixed schedule when rate > 0. */
    static final class Producer {
        /** Wake this long before a deadline, then spin: Linux timer slack (~50 us) makes a later wake-up late. */
        static final long PARK_MARGIN_NS = 100_000;
        /** Throughput: how often the producer's count reaches the shared counter (a power of two). */
        static final long FLUSH_EVERY = 4096;
        final Counter produced = new Counter();
        private final Transport transport;
        private final long rate;
        private final LatencyRecorder lateness;
        private final Thread thread;
        private volatile boolean running = true;
        private volatile long stopAtNs;
        private volatile boolean stopAtSet;
        private long firstIntendedNs; // the schedule's origin: intended times are firstIntendedNs + k * period

        Producer(Transport transport, long rate, LatencyRecorder lateness) {
            this.transport = transport;
            this.rate = rate;
            this.lateness = lateness;
            this.thread = new Thread(this::loop, "producer");
            this.thread.setDaemon(true);
        }

        void start() {
            firstIntendedNs = System.nanoTime();
            thread.start();
        }

        /** Fixed rate: publish every event intended before {@code endNs} (however late), then stop. */
        void stopAtIntended(long endNs) {
            stopAtNs = endNs;
            stopAtSet = true;
        }

        /** Waits until the producer stopped by itself, or until the deadline. */
        void awaitEnd(long deadlineNs) throws InterruptedException {
            long left = deadlineNs - System.nanoTime();
            if (left > 0) thread.join(Math.max(1, left / 1_000_000));
        }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(2000);
        }

        boolean stopped() { return !thread.isAlive(); }

        /** The sum of every published value; read after stop(). */
        long checksum() { return produced.checksum(); }

        /** How many events the schedule intends in [startNs, endNs). */
        long scheduledIn(long startNs, long endNs, long rate) {
            long period = 1_000_000_000L / rate;
            return Math.max(0, ceilDiv(endNs - firstIntendedNs, period) - ceilDiv(startNs - firstIntendedNs, period));
        }

        private static long ceilDiv(long a, long b) {
            return -Math.floorDiv(-a, b);
        }

        /** Bytes this thread has allocated so far (HotSpot), or -1 where the JVM cannot tell. */
        long allocatedBytes() {
            if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported())
                return t.getThreadAllocatedBytes(thread.getId());
            return -1;
        }

        private void loop() {
            try {
                if (rate > 0) onSchedule();
                else asFastAsTaken();
            } catch (InterruptedException e) {
                // stopped
            }
        }

        /** Fixed rate: one event per period from the schedule's origin, each timed from its intended start. */
        private void onSchedule() throws InterruptedException {
            long x = 0x9E3779B97F4A7C15L;
            long period = 1_000_000_000L / rate;
            long next = firstIntendedNs;
            while (running) {
                x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
                if (stopAtSet && next - stopAtNs >= 0) return; // the window's schedule is done
                waitUntil(next);
                long sent = System.nanoTime();
                long token = transport.publish(x, next, sent);
                lateness.record(next, next, sent);
                next += period;
                produced.add(token);
            }
        }

        /**
         * Throughput: publish as fast as the transport takes events, doing per event what the minimal program does.
         * The count and the checksum stay in registers and reach the shared counter every {@link #FLUSH_EVERY}
         * events and at the end, instead of a store the reader's core may pull over on every event.
         */
        private void asFastAsTaken() throws InterruptedException {
            long n = 0, checksum = 0;
            try {
                while (running) {
                    checksum += transport.publish(n, 0, 0); // the value n is unique per event; counted once it went through
                    if ((++n & (FLUSH_EVERY - 1)) == 0) produced.set(n, checksum);
                }
            } finally {
                produced.set(n, checksum);
            }
        }

        /** Parks for long gaps and spins for the last PARK_MARGIN_NS, to leave the 2nd core to consumers yet be on time. */
        private void waitUntil(long deadline) throws InterruptedException {
            for (long gap; (gap = deadline - System.nanoTime()) > 0; ) {
                if (gap > PARK_MARGIN_NS) LockSupport.parkNanos(gap - PARK_MARGIN_NS);
                else Thread.onSpinWait();
                if (!running) throw new InterruptedException();
            }
        }
    }

    /** The original's transport: allocate an event, put() it, consumers compete with poll(100 ms). */
    static final class QueueTransport implements Transport {
        private final ArrayBlockingQueue<Event> queue;
        private final Thread[] threads;
        private final boolean timed;
        private volatile boolean running = true;

        QueueTransport(int capacity, boolean timed, Consumer[] consumers) {
            this.timed = timed;
            queue = new ArrayBlockingQueue<>(capacity);
            threads = new Thread[consumers.length];
            for (int i = 0; i < consumers.length; i++) {
                Consumer c = consumers[i];
                threads[i] = new Thread(() -> consume(c), "abq-consumer-" + i);
                threads[i].setDaemon(true);
            }
        }

        private void consume(Consumer c) {
            try {
                while (running) {
                    Event e = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (e != null) c.take(e, e.value);
                }
            } catch (InterruptedException ignored) {
                // stopped
            }
        }

        public void start() { for (Thread t : threads) t.start(); }

        public long publish(long value, long intendedNs, long sentNs) throws InterruptedException {
            Event e;
            if (timed) {
                TimedEvent t = new TimedEvent();
                t.intendedNs = intendedNs;
                t.sentNs = sentNs;
                e = t;
            } else e = new Event();
            e.value = value;
            queue.put(e);
            return value;
        }

        public void stop() {
            running = false;
            for (Thread t : threads) t.interrupt();
        }
    }

    /** The Disruptor: preallocated events in a ring, consumed by one handler, sharded handlers, or work-sharing consumers. */
    static final class DisruptorTransport implements Transport {
        private final Disruptor<Event> disruptor;
        private final boolean timed;
        private RingBuffer<Event> ring;

        DisruptorTransport(int capacity, boolean timed, WaitStrategy wait, boolean workSharing, Consumer[] consumers) {
            this.timed = timed;
            int size = Integer.highestOneBit(capacity - 1) << 1;
            disruptor = new Disruptor<>(timed ? TimedEvent::new : Event::new, size, DaemonThreadFactory.INSTANCE, ProducerType.SINGLE, wait);
            int n = consumers.length;
            if (workSharing) {
                RingBuffer<Event> r = disruptor.getRingBuffer();
                SequenceBarrier barrier = r.newBarrier();
                Sequence claim = new Sequence(); // the shared counter: the last sequence any consumer claimed
                EventProcessor[] workers = new EventProcessor[n];
                for (int k = 0; k < n; k++) workers[k] = new WorkSharingConsumer(r, barrier, claim, consumers[k]);
                disruptor.handleEventsWith(workers); // registers each worker's sequence as a gating sequence
            } else {
                @SuppressWarnings("unchecked")
                EventHandler<Event>[] handlers = new EventHandler[n];
                for (int k = 0; k < n; k++) handlers[k] = n == 1 ? single(consumers[k]) : shard(k, n, consumers[k]);
                disruptor.handleEventsWith(handlers);
            }
        }

        private static EventHandler<Event> single(Consumer c) {
            return (e, sequence, endOfBatch) -> c.take(e, sequence);
        }

        /** Sharded broadcast: every handler sees every slot and keeps its own share. */
        private static EventHandler<Event> shard(int k, int n, Consumer c) {
            return (e, sequence, endOfBatch) -> {
                if (sequence % n == k) c.take(e, sequence);
            };
        }

        public void start() { ring = disruptor.start(); }

        public long publish(long value, long intendedNs, long sentNs) {
            long seq = ring.next();
            Event e = ring.get(seq);
            e.value = value;
            if (timed) {
                TimedEvent t = (TimedEvent) e;
                t.intendedNs = intendedNs;
                t.sentNs = sentNs;
            }
            ring.publish(seq);
            return seq;
        }

        public void stop() { disruptor.halt(); }
    }

    /**
     * One work-sharing consumer: claims the next sequence from the shared counter, waits until it is published,
     * handles it. Its own sequence (the producer's gate) is set to one below each claim before claiming, so it
     * never passes a slot it has claimed but not yet handled; the producer waits for the slowest such gate.
     */
    static final class WorkSharingConsumer implements EventProcessor {
        private final RingBuffer<Event> ring;
        private final SequenceBarrier barrier;
        private final Sequence claim;
        private final Consumer consumer;
        private final Sequence sequence = new Sequence();
        private volatile boolean running;

        WorkSharingConsumer(RingBuffer<Event> ring, SequenceBarrier barrier, Sequence claim, Consumer consumer) {
            this.ring = ring;
            this.barrier = barrier;
            this.claim = claim;
            this.consumer = consumer;
        }

        public Sequence getSequence() { return sequence; }

        public void halt() {
            running = false;
            barrier.alert();
        }

        public boolean isRunning() { return running; }

        public void run() {
            running = true;
            boolean handled = true;
            long next = sequence.get(), available = Long.MIN_VALUE;
            while (running) {
                try {
                    if (handled) {
                        handled = false;
                        do {
                            next = claim.get() + 1;
                            sequence.set(next - 1);
                        } while (!claim.compareAndSet(next - 1, next));
                    }
                    if (available >= next) {
                        consumer.take(ring.get(next), next);
                        handled = true;
                    } else {
                        available = barrier.waitFor(next);
                    }
                } catch (AlertException | InterruptedException | TimeoutException e) {
                    // halted: the loop condition ends it
                }
            }
        }
    }
}
