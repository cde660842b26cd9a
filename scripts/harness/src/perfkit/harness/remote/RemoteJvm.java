package perfkit.harness.remote;

import perfkit.harness.process.ForkProtocol;
import perfkit.harness.process.Profiler;
import perfkit.harness.run.Forks;
import perfkit.harness.measure.JvmActivity;
import perfkit.harness.record.Manifest;
import perfkit.harness.run.Run;
import perfkit.harness.run.ScriptJvm;
import perfkit.harness.os.Ssh;
import perfkit.harness.process.Supervisor;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A JVM of the run on another host ({@code --place app=user@host}): a server of the study's own script, as
 * {@link Run#startService} starts one here ({@link ChildProcess} with its parameters on stdin), or another script's
 * program such as the load driver ({@link #program}). Its agent (scripts/harness/parts/jvm.py) is a
 * {@link RemotePart}, so it is tied to the run's life. The host needs python3, setpriv and a java, not the kit: the
 * classpath goes over SSH once into the host's jar cache (by content, so a second run sends only what changed). A
 * server binds the address the run reached the host on ({@link #bindAddress}).
 * <p>
 * Its JIT and GC reports carry the remote JVM's {@code nanoTime}, which means nothing here: each is re-timed on arrival.
 */
public final class RemoteJvm implements AutoCloseable, Forks.PlacedHost {
    /** Where a JVM binds: set by the part's agent on another host, else loopback. */
    static final String BIND_ENV = "PERFKIT_BIND";
    private static final int START_TIMEOUT_S = 60;
    private static final int SYNC_TIMEOUT_S = 900;
    /** The classpath's jars as sent: their content hash and size, read once per run. */
    private static final Map<Path, Jar> JARS = new HashMap<>();

    record Jar(Path path, String sha256, long size) {}

    private RemotePart part;
    /** A fork of the run: its files, recordings included, come back when it exits. */
    private boolean fork;
    /** Its GC log's name in its work folder there, when it is a JVM under test (null: a program that keeps none). */
    private volatile String gcLog;
    private final java.util.concurrent.CompletableFuture<Integer> exited = new java.util.concurrent.CompletableFuture<>();
    private final List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Recordings asked for ({@code --profile}) and not yet here: {@link #close} waits for them. */
    private final java.util.Set<String> fetching = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final int FETCH_WAIT_S = 30;

    private RemoteJvm() {}

    /** The address a service binds: the one the run reached this host on when it is a placed part, else 127.0.0.1. */
    public static String bindAddress() {
        String bind = System.getenv(BIND_ENV);
        return bind == null || bind.isBlank() ? "127.0.0.1" : bind;
    }

    /**
     * What keeps {@code host} from running a JVM of the run (no setpriv, not the JDK {@code java} at the same path: the
     * run's --java, blank for the run's own), in one line; null when it can.
     */
    public static String problem(String part, Ssh host, String java) {
        return RemotePart.problem("jvm", part, host, Map.of("java", java == null || java.isBlank() ? Supervisor.ownJava() : java));
    }

    /**
     * Starts the study's main class with {@code args} on {@code host} as part {@code part}, its series {@code series}
     * (as a local service's), and hands each line it prints to {@code lines}; returns once it runs.
     */
    public static RemoteJvm start(Run run, String part, String series, Ssh host, String java, List<String> jvmArgs, Class<?> mainClass, List<String> args,
                           Map<String, String> privateParams, Consumer<String> lines) throws Exception {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("java", java == null ? run.supervisor().childJava() : java);
        message.put("jvmArgs", jvmArgs);
        message.put("main", mainClass.getName());
        message.put("childProcess", true);
        message.put("args", args);
        message.put("firstLine", Manifest.JSON.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT).writeValueAsString(privateParams));
        RemoteJvm jvm = new RemoteJvm();
        jvm.launch(run, part, series, host, jars(run, System.getProperty("java.class.path")), message, lines, Map.of());
        jvm.exited.thenAccept(code -> { if (code != 0) run.progress().say(series + " on " + host + " exited with code " + code); });
        return jvm;
    }

    /**
     * A long-running JVM of the study's own script (a broker, say) on {@code host} as part {@code part}, as
     * {@link Run#startService} starts one here; {@code {work}} in {@code args} names a folder of its own there, gone
     * with it. Each line it prints goes to {@code lines}; {@link #close} stops it.
     */
    public static RemoteJvm service(Run run, String part, String series, Ssh host, List<String> jvmArgs, List<String> args,
                                    Map<String, String> privateParams, Consumer<String> lines) throws Exception {
        return start(run, part, series, host, null, jvmArgs, run.mainClass(), args, privateParams, lines);
    }

    /**
     * A fork of the run ({@link Forks}) on {@code host} as part {@code part}: the study's main class with {@code args}
     * under {@link ChildProcess}, as here, with its spec line on stdin ({@code {work}} in {@code args} is the fork's
     * folder there). Each line it prints goes to {@code lines}, its ticks re-timed on arrival; when it ends, the files it
     * wrote under {@code collect}'s keys come back to the local paths given, before {@link #awaitExit} answers.
     */
    static RemoteJvm fork(Run run, String part, String series, Ssh host, List<String> jvmArgs, List<String> args, String specLine,
                          Map<String, Path> collect, Consumer<String> lines) throws Exception {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("java", run.supervisor().childJava());
        message.put("jvmArgs", jvmArgs);
        message.put("main", run.mainClass().getName());
        message.put("childProcess", true);
        message.put("args", args);
        message.put("firstLine", specLine);
        message.put("collect", List.copyOf(collect.keySet()));
        RemoteJvm jvm = new RemoteJvm();
        jvm.fork = true;
        jvm.launch(run, part, series, host, jars(run, System.getProperty("java.class.path")), message, lines, collect);
        return jvm;
    }

    /** Where the run's forks of part {@code part} run on {@code host} ({@link Forks#on}): under that part's agent there. */
    public static Forks.Host forkHost(String part, Ssh host) { return new Forks.Host(part, host, RemoteJvm::runFork); }

    /** Each run's first fork of each part, whose entry is the part's in the manifest's placement: one entry per part. */
    private static final Map<Run, Map<String, RemoteJvm>> FIRST_FORK_OF_PART = java.util.Collections.synchronizedMap(new HashMap<>());

    private static Forks.Launched runFork(Run run, String part, Ssh host, String series, List<String> jvmArgs, String stdinLine,
                                        Consumer<String> lines) throws Exception {
        Path dir = run.dir();
        // what a fork writes into its folder: its latency logs, its libraries' log, and its stack trace if it fails
        String errorFile = "error-" + series.replaceAll("[^A-Za-z0-9._-]", "_") + ".txt";
        Map<String, Path> collect = Map.of("latency", dir.resolve("latency"), "logs", dir.resolve("logs"), errorFile, dir.resolve(errorFile));
        // the fork's folder there stands for this run's folder: a JVM option naming a path in it (a library's temp
        // folder in the scratch, say) names the same path in the fork's folder
        List<String> there = jvmArgs.stream().map(a -> a.replace(dir.toString(), "{work}")).toList();
        RemoteJvm jvm = fork(run, part, series, host, there, List.of(ForkProtocol.FLAG, "{work}", series), stdinLine, collect, lines);
        Map<String, RemoteJvm> firsts = FIRST_FORK_OF_PART.computeIfAbsent(run, r -> {
            r.onFinish(() -> FIRST_FORK_OF_PART.remove(r));
            return new java.util.concurrent.ConcurrentHashMap<>();
        });
        try {
            // a later fork that leaves its folder behind marks the first's entry
            if (firsts.putIfAbsent(part, jvm) == null) jvm.record(series + " (a fork of the run)");
            Integer code = jvm.awaitExit();
            if (code != null && !jvm.fileProblems().isEmpty())
                throw new IllegalStateException("fork " + series + " on " + host + " sent " + jvm.fileProblems().get(0));
            return new Forks.Launched(code, jvm);
        } finally {
            jvm.close();
            RemoteJvm entry = firsts.get(part);
            if (jvm.leftBehind() && entry != null && entry != jvm) entry.markLeftBehind();
        }
    }

    /**
     * Another script's program ({@code mainClass} on {@code classpath}, as {@link ScriptJvm} runs one here) on {@code host}:
     * {@code files} (name: text) are written into its work folder first, and {@code {work}} in {@code args} names that
     * folder; when it ends by itself, each file under {@code collect}'s keys (a file or folder in its work folder) comes
     * back to the local path given, before {@link #exitCode} answers.
     */
    public static RemoteJvm program(Run run, String part, String series, Ssh host, List<String> jvmArgs, ScriptJvm program, List<String> args,
                             Map<String, String> files, Map<String, Path> collect, Consumer<String> lines) throws Exception {
        return program(run, part, series, host, jvmArgs, program, args, files, "", collect, lines);
    }

    /** The same, with {@code firstLine} (a secret, say) on its stdin, as {@link ScriptJvm#start} gives one here. */
    public static RemoteJvm program(Run run, String part, String series, Ssh host, List<String> jvmArgs, ScriptJvm program,
                                    List<String> args, Map<String, String> files, String firstLine, Map<String, Path> collect,
                                    Consumer<String> lines) throws Exception {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("java", program.java()); // as it runs here, and as the --place check asks for it
        message.put("jvmArgs", jvmArgs);
        message.put("main", program.mainClass());
        message.put("childProcess", false);
        message.put("args", args);
        message.put("firstLine", firstLine);
        message.put("files", files);
        message.put("collect", List.copyOf(collect.keySet()));
        RemoteJvm jvm = new RemoteJvm();
        jvm.launch(run, part, series, host, jars(run, program.classpath()), message, lines, collect);
        return jvm;
    }

    private void launch(Run run, String part, String series, Ssh host, List<Jar> jars, Map<String, Object> message, Consumer<String> lines,
                        Map<String, Path> collect) throws Exception {
        sync(run, host, jars);
        message.put("classpath", jars.stream().map(Jar::sha256).toList());
        // a JVM under test (a fork or a service) records itself with --profile there: its recordings come home too
        boolean underTest = Boolean.TRUE.equals(message.get("childProcess"));
        Map<String, Path> home = new HashMap<>(collect);
        if (underTest) {
            home.put(Profiler.DIR, run.dir().resolve(Profiler.DIR));
            // its GC log too, as one here keeps: written in its folder there, home with its exit or as it is closed
            // (in the work folder itself: -Xlog creates no folder, and a JVM whose log it cannot open does not start)
            String file = run.supervisor().gcLogFile(series, " on " + host);
            gcLog = "gc-" + file;
            home.put(gcLog, run.dir().resolve("logs").resolve("gc").resolve(file));
            List<Object> jvmArgs = new ArrayList<>(message.get("jvmArgs") instanceof List<?> l ? l : List.of());
            jvmArgs.addAll(0, Supervisor.gcLogFlag("{work}/" + gcLog)); // before the user's, as here: their own -Xlog adds to it
            message.put("jvmArgs", jvmArgs);
            List<Object> names = new ArrayList<>(message.get("collect") instanceof List<?> l ? l : List.of());
            names.addAll(List.of(Profiler.DIR, gcLog));
            message.put("collect", names);
        }
        Consumer<String> out = line -> lines.accept(retimed(line, System.nanoTime()));
        Profiled profiled = underTest ? new Profiled(series) : null;
        this.part = RemotePart.start(run, part, "jvm", host, message, "started", START_TIMEOUT_S, "proc:" + series + "@" + part,
                Map.of("out", out, "file", payload -> received(payload, home), "nofile", name -> fetching.remove(name.strip()),
                        "exit", code -> exited.complete(Integer.parseInt(code.strip())),
                        RemotePart.END, last -> exited.completeExceptionally(new IllegalStateException(last))),
                // profiled from the moment it runs, not once this host has timed the link: a quick fork measures by then
                started -> {
                    if (profiled == null) return;
                    profiled.agent = started;
                    run.supervisor().jvmElsewhere(profiled);
                });
    }

    /**
     * This JVM as {@code --profile} sees it: told over its agent, recording into its folder there, and each recording
     * fetched when its window closes (a service may be stopped right after, which would take its folder with it).
     */
    private final class Profiled implements Profiler.Target {
        private final String series;
        private volatile RemotePart agent;

        Profiled(String series) { this.series = series; }

        @Override public String name() { return series; }

        @Override public boolean alive() { return !exited.isDone(); }

        @Override public void tell(String line) throws IOException { agent.tell(line); }

        /** {@code {work}}: the agent puts its work folder there (jvm.py), as in the JVM's arguments. */
        @Override public String pathFor(Path local) { return "{work}/" + Profiler.DIR + "/" + local.getFileName(); }

        /** A service's recording, fetched now: it is stopped with its folder. A fork's come back when it exits. */
        @Override public void fetch(Path local) {
            if (fork) return;
            String name = Profiler.DIR + "/" + local.getFileName();
            fetching.add(name);
            try {
                agent.ask("send-file " + name);
            } catch (IOException ended) {
                fetching.remove(name); // its session ended, and its folder with it
            }
        }
    }

    /** A file the program left, written where {@code collect} says; one whose name leads elsewhere is refused. */
    private void received(String payload, Map<String, Path> collect) {
        try {
            JsonNode f = Manifest.JSON.readTree(payload);
            String name = f.path("name").asText();
            Path target = target(name, collect);
            if (target == null) {
                received.add("a file it was not asked for: " + name);
                return;
            }
            Files.createDirectories(target.getParent());
            Files.write(target, java.util.Base64.getDecoder().decode(f.path("data").asText()));
            fetching.remove(name);
        } catch (IOException | IllegalArgumentException e) {
            received.add("an unreadable file: " + e.getMessage());
        }
    }

    /**
     * Where a file named {@code name} (relative to the program's work folder there) goes here: under the local path of
     * the {@code collect} key it is, or lies under; null when it is none of them or its name climbs out of one.
     */
    static Path target(String name, Map<String, Path> collect) {
        for (var e : collect.entrySet()) {
            String key = e.getKey();
            if (!name.equals(key) && !name.startsWith(key + "/")) continue;
            Path base = e.getValue().toAbsolutePath().normalize();
            Path target = (name.equals(key) ? base : base.resolve(name.substring(key.length() + 1))).normalize();
            return target.equals(base) && !name.equals(key) || !target.startsWith(base) ? null : target;
        }
        return null;
    }

    /**
     * The program's exit code once it has ended by itself and its files are in, waiting at most {@code seconds};
     * null when it did not end so (it was stopped, or its session broke).
     */
    public Integer exitCode(double seconds) throws InterruptedException {
        try {
            return exited.get((long) (seconds * 1000), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return null;
        }
    }

    /**
     * The JVM's exit code once it has ended by itself and its files are in, however long that takes; null when its
     * session broke first (the host or the link went away, or the part was closed).
     */
    public Integer awaitExit() throws InterruptedException {
        try {
            return exited.get();
        } catch (java.util.concurrent.ExecutionException e) {
            return null;
        }
    }

    /** Files it sent that were refused or unreadable: empty when all arrived. */
    public List<String> fileProblems() { return List.copyOf(received); }

    /**
     * A JIT/GC report or a fork's tick with this host's {@code nanoTime} in place of the remote JVM's (it means nothing
     * here); any other line as it is.
     */
    static String retimed(String line, long nanoTime) {
        if (line.startsWith(ForkProtocol.TICK)) {
            String[] f = line.substring(ForkProtocol.TICK.length()).trim().split(" ");
            return f.length == 2 && f[0].matches("\\d{1,18}") ? ForkProtocol.tick(Long.parseLong(f[0]), nanoTime) : line;
        }
        if (!line.startsWith(JvmActivity.LINE)) return line;
        String[] f = line.substring(JvmActivity.LINE.length()).trim().split(" ");
        return f.length == 3 ? JvmActivity.LINE + nanoTime + " " + f[1] + " " + f[2] : line;
    }

    /** The address the JVM listens on. */
    public String address() { return part.ready().path("address").asText(); }

    /** The java that runs it there, as {@code java -version} says. */
    public String javaVersion() { return part.ready().path("java").asText(); }

    /** Puts it in the manifest's placement, with the round trip to its port. */
    public void record(int port, String service) { part.record(port, service + " (" + javaVersion() + ")"); }

    /** The same for a program that listens nowhere: the round trip to its host's SSH port. */
    public void record(String service) { record(part.ready().path("sshPort").asInt(22), service); }

    /** Puts {@code line} on the JVM's stdin, after its start (a shared load driver's {@code go}). */
    public void tell(String line) throws IOException { part.tell(line); }

    /** The part host's epoch ms for an instant of this host's clock. */
    public long remoteMs(long localEpochMs) { return part.remoteMs(localEpochMs); }

    /** This host's epoch ms for an instant of the part host's clock, by the offset measured at its start. */
    @Override
    public long localMs(long remoteEpochMs) { return part.localMs(remoteEpochMs); }

    /** The local process that holds its session: it ends when the remote JVM does. */
    public Process session() { return part.session(); }

    /** Its CPU in percent of one of its host's cores between two instants of this host's clock; NaN without readings. */
    public double cpuPercent(long fromMs, long toMs) throws InterruptedException { return part.cpuPercent(fromMs, toMs); }

    /** Its host's busy CPU in percent of one of that host's cores between two instants of this host's clock; NaN without readings. */
    @Override
    public double hostBusyPercent(long fromMs, long toMs) { return part.hostBusyPercent(fromMs, toMs); }

    /** Its host's steal in percent of one of that host's cores between two instants of this host's clock; NaN without readings. */
    @Override
    public double hostStealPercent(long fromMs, long toMs) { return part.hostStealPercent(fromMs, toMs); }

    /** Its host's logical cores, from its fingerprint. */
    @Override
    public int hostCores() { return part.hostCores(); }

    /** The host it runs on. */
    public Ssh host() { return part.host(); }

    /** Whether its folder was still on its host when it was closed. */
    public boolean leftBehind() { return part.leftBehind(); }

    /** Marks its manifest entry as standing for a later JVM of the same part that left its folder behind. */
    public void markLeftBehind() { part.markLeftBehind(); }

    /**
     * Stops the JVM and checks that its folder is gone from its host; safe to call twice. Recordings asked for and not
     * yet here are waited for first, at most {@value #FETCH_WAIT_S} s.
     */
    @Override
    public void close() {
        // a service is stopped with its folder: its GC log comes home first (a fork's came with its exit)
        if (gcLog != null && !fork && !exited.isDone() && part != null) {
            fetching.add(gcLog);
            try {
                part.ask("send-file " + gcLog);
            } catch (IOException ended) {
                fetching.remove(gcLog);
            }
        }
        long deadline = System.nanoTime() + FETCH_WAIT_S * 1_000_000_000L;
        try {
            while (!fetching.isEmpty() && !exited.isDone() && System.nanoTime() < deadline) Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        part.close();
    }

    /**
     * Closes a program that ran beside part {@code part}'s forks (queues' minimal program): a folder it leaves behind
     * marks the part's entry in the manifest, as a later fork's does.
     */
    public void closeBesideForks(Run run, String part) {
        close();
        Map<String, RemoteJvm> firsts = FIRST_FORK_OF_PART.get(run);
        RemoteJvm entry = firsts == null ? null : firsts.get(part);
        if (leftBehind() && entry != null && entry != this) entry.markLeftBehind();
    }

    /** A classpath as jars: a folder on it (classes compiled in place) is packed into one, in the run's scratch. */
    static synchronized List<Jar> jars(Run run, String classpath) throws IOException {
        List<Jar> out = new ArrayList<>();
        for (String entry : classpath.split(java.io.File.pathSeparator)) {
            if (entry.isBlank()) continue;
            Path p = Path.of(entry).toAbsolutePath();
            if (Files.isDirectory(p)) p = packed(run.scratchDir(), p);
            else if (!Files.isRegularFile(p)) continue; // a missing entry: the JVM here ignores it too
            Path key = p;
            Jar known = JARS.get(key);
            if (known == null || known.size() != Files.size(p)) {
                known = new Jar(p, sha256(p), Files.size(p));
                JARS.put(key, known);
            }
            out.add(known);
        }
        return out;
    }

    static Path packed(Path scratch, Path folder) throws IOException {
        Path jar = Files.createDirectories(scratch).resolve("classes-" + Integer.toHexString(folder.toString().hashCode()) + ".jar");
        try (var zip = new java.util.zip.ZipOutputStream(Files.newOutputStream(jar)); var files = Files.walk(folder)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                java.util.zip.ZipEntry e = new java.util.zip.ZipEntry(folder.relativize(f).toString().replace('\\', '/'));
                e.setTime(0); // the same classes give the same jar, and the host's cache keeps one
                zip.putNextEntry(e);
                Files.copy(f, zip);
                zip.closeEntry();
            }
        }
        return jar;
    }

    static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) d.update(buf, 0, n);
            return HexFormat.of().formatHex(d.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Sends the jars the host's cache lacks, over one SSH session of its own (bytes, not lines: no watchdog between).
     * If the run dies meanwhile, the session's stdin closes and the agent drops the jar it was writing.
     */
    private static void sync(Run run, Ssh host, List<Jar> jars) throws Exception {
        Process p = new ProcessBuilder(RemotePart.agentCommand(host)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (OutputStream in = p.getOutputStream(); BufferedReader answers = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            java.util.concurrent.CompletableFuture.delayedExecutor(SYNC_TIMEOUT_S, TimeUnit.SECONDS).execute(p::destroyForcibly);
            List<Map<String, Object>> list = jars.stream().map(j -> Map.<String, Object>of("sha256", j.sha256(), "size", j.size())).toList();
            in.write((RemotePart.message("jvm", Map.of("jars", list)) + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            JsonNode need = Manifest.JSON.readTree(answer(answers, "need", host));
            long bytes = 0;
            for (JsonNode sha : need) for (Jar j : jars) if (j.sha256().equals(sha.asText())) { Files.copy(j.path(), in); bytes += j.size(); break; }
            in.flush();
            if (!need.isEmpty()) run.progress().say(String.format(java.util.Locale.ROOT, "sent %d jars (%.1f MB) of the classpath to %s", need.size(), bytes / 1e6, host));
            answer(answers, "synced", host);
        } finally {
            if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly();
        }
    }

    private static String answer(BufferedReader answers, String kind, Ssh host) throws IOException {
        String line = answers.readLine();
        if (line == null) throw new IllegalStateException("the classpath could not be sent to " + host + ": the session ended");
        if (line.startsWith("error ")) throw new IllegalStateException("the classpath could not be sent to " + host + ": " + line.substring(6));
        if (!line.startsWith(kind)) throw new IllegalStateException("the classpath could not be sent to " + host + ": unexpected answer " + line);
        return line.substring(kind.length()).strip();
    }
}
