// SPDX-License-Identifier: Apache-2.0
// Test victim: a JVM whose live heap grows at a steady rate until the
// container kills it (the most common JVM OOM on Kubernetes: -Xmx above
// the container's limit). Idles IDLE_MS first (the sidecar takes its
// facts while the JVM is healthy), then holds 1 MiB byte[] (every page
// touched) at RATE MiB/s, printing "held N" every 16 MiB.
// Usage: java HeapGrower [RATE_MIB_S] [IDLE_MS]
import java.util.ArrayList;
import java.util.List;

public class HeapGrower {
    static final List<byte[]> HOLD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        long idle = args.length > 1 ? Long.parseLong(args[1]) : 2000;
        System.out.println("start " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(idle);
        long t0 = System.nanoTime();
        for (int i = 1; ; i++) {
            byte[] b = new byte[1 << 20];
            for (int j = 0; j < b.length; j += 4096)
                b[j] = (byte) j;
            HOLD.add(b);
            if (i % 16 == 0) {
                System.out.println("held " + i);
                System.out.flush();
            }
            // paced: the i-th MiB is due at i / rate seconds
            long due = t0 + (long) i * 1_000_000_000L / rate;
            long wait = due - System.nanoTime();
            if (wait > 0)
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }
}
