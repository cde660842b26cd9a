package perfkit.messaging;

/**
 * How one chain instance moves messages: hop 0 is driver -> service 1, hop h is service h -> service h+1,
 * hop 5 is service 5 -> driver. Senders and receivers are created by the thread that uses them
 * (Chronicle appenders and tailers are per thread).
 */
interface Transport extends AutoCloseable {
    int HOPS = 6;

    /** Creates whatever the instances need (topics, queue folders) before any thread starts. */
    void prepare(int firstInstance, int instances) throws Exception;

    Sender sender(int instance, int hop) throws Exception;

    Receiver receiver(int instance, int hop) throws Exception;

    /** Removes what {@link #prepare} created. */
    @Override
    void close() throws Exception;

    interface Sender extends AutoCloseable {
        void send(long intendedNs, long sentNs, long seq, int hops) throws Exception;

        @Override
        default void close() throws Exception {}
    }

    interface Receiver extends AutoCloseable {
        /**
         * Hands the messages available to the handler and returns how many there were. When there are none
         * it waits up to {@code idleWaitNanos} (0 = return at once), the original's back-off of 1/8 of the
         * message interval, in the transport's idle policy (Kafka: {@link KafkaTransport.Poll}; Chronicle parks).
         */
        int poll(Handler handler, long idleWaitNanos) throws Exception;

        @Override
        default void close() throws Exception {}
    }

    interface Handler {
        void on(long intendedNs, long sentNs, long seq, int hops) throws Exception;
    }
}
