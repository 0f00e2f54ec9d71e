// A hosted Java bot (docs/hosted.md, runtime "java"): a random legal index, stdio line protocol.
// Its first argument is the seed (default 12345). At its start it prints to stderr what the JVM was given
// (version, heap, processors), which the tests compare with the sandbox's limits.
// With "heap" as its second argument it answers nothing: at its first decision request a worker thread
// keeps allocating until the heap runs out, while the main thread waits for it (a bot that would hang
// for ever were the JVM not told to exit on OutOfMemoryError). With "threads" it first starts threads
// that sleep until it cannot start more, says how many it got, then plays.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

public final class RandomBot {
    private static final String REQUEST = "\"type\":\"decision_request\"";
    private static final String COUNT = "\"num_actions\":";

    public static void main(String[] args) throws Exception {
        Random rng = new Random(args.length > 0 ? Long.parseLong(args[0]) : 12345L);
        String mode = args.length > 1 ? args[1] : "";
        Runtime rt = Runtime.getRuntime();
        System.err.println("java " + System.getProperty("java.version") + " max_heap_mb " + rt.maxMemory() / (1 << 20)
                + " processors " + rt.availableProcessors() + " tmpdir " + System.getProperty("java.io.tmpdir"));
        if (mode.equals("threads")) {
            System.err.println("threads started " + startThreads());
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.contains(REQUEST)) {
                continue;
            }
            if (mode.equals("heap")) {
                Thread hog = new Thread(RandomBot::hog);
                hog.start();
                hog.join();
            }
            int at = line.indexOf(COUNT);
            int n = 1;
            if (at >= 0) {
                int end = at + COUNT.length();
                while (end < line.length() && Character.isDigit(line.charAt(end))) {
                    end++;
                }
                n = Integer.parseInt(line.substring(at + COUNT.length(), end));
            }
            System.out.println(rng.nextInt(Math.max(1, n)));
            System.out.flush();
        }
    }

    private static void hog() {
        List<long[]> kept = new ArrayList<>();
        while (true) {
            kept.add(new long[1 << 20]); // 8 MiB a step, all kept
        }
    }

    private static int startThreads() {
        int started = 0;
        try {
            while (started < 10000) {
                Thread t = new Thread(() -> {
                    try {
                        Thread.sleep(Long.MAX_VALUE);
                    } catch (InterruptedException e) {
                        return;
                    }
                });
                t.setDaemon(true);
                t.start();
                started++;
            }
        } catch (OutOfMemoryError e) { // "unable to create native thread": the process limit
            System.err.println("no more threads: " + e.getMessage());
        }
        return started;
    }
}
