package perfkit.harness.os;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * Which signal ends a run: Ctrl-C (INT) and SIGTERM are noted, as the exit code they call for (128 + the signal's
 * number), before the JVM's own handler starts the shutdown. {@code sun.misc.Signal} is reached by reflection: javac
 * warns about it on every compile otherwise, and a study's first run would print those warnings to its user.
 */
public final class Signals {
    private Signals() {}

    /** Tells {@code exitCode} the code each INT or TERM calls for, then hands the signal on to the JVM's handler. */
    public static void watch(IntConsumer exitCode) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal"), handlerType = Class.forName("sun.misc.SignalHandler");
            Method handle = signalClass.getMethod("handle", signalClass, handlerType);
            Method number = signalClass.getMethod("getNumber");
            Method delegate = handlerType.getMethod("handle", signalClass);
            Object identity = new Object(); // answers toString, hashCode and equals for the proxy
            for (String name : List.of("INT", "TERM")) {
                Object signal = signalClass.getConstructor(String.class).newInstance(name);
                Object[] jvmHandler = new Object[1];
                Object ours = Proxy.newProxyInstance(handlerType.getClassLoader(), new Class<?>[]{handlerType}, (proxy, m, args) -> {
                    if (!m.getName().equals("handle")) return m.invoke(identity, args);
                    int code = 128 + (int) number.invoke(args[0]);
                    exitCode.accept(code);
                    try {
                        delegate.invoke(jvmHandler[0], args[0]);
                    } catch (InvocationTargetException e) {
                        if (!(e.getCause() instanceof UnsupportedOperationException)) throw e.getCause();
                        System.exit(code); // a native default: exit the usual way
                    }
                    return null;
                });
                try {
                    jvmHandler[0] = handle.invoke(null, signal, ours);
                } catch (InvocationTargetException e) {
                    if (!(e.getCause() instanceof IllegalArgumentException)) throw e;
                    // started with this signal ignored (e.g. nohup): leave it so
                }
            }
        } catch (ReflectiveOperationException e) {
            System.err.println("perfkit: cannot watch for Ctrl-C and SIGTERM (" + e + "); an interrupted run still stops, with the JVM's exit code");
        }
    }
}
