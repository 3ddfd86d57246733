// SPDX-License-Identifier: Apache-2.0
// Test victim for the seed case "glibc kept freed memory": THREADS threads
// each malloc MB MiB in 4 KiB blocks (Unsafe.allocateMemory is os::malloc),
// touch them, then free all but the last block of each thread. The pinned
// block keeps every arena's top from shrinking, so RSS stays high although
// the memory is free; malloc_trim (System.trim_native_heap) returns it.
// Prints "ready <bytes freed>" and sleeps. Usage: java NativeChurn [THREADS] [MB]
import java.lang.reflect.Field;

public class NativeChurn {
    static final long BLOCK = 4096;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        long mb = args.length > 1 ? Long.parseLong(args[1]) : 32;
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe u = (sun.misc.Unsafe) f.get(null);
        long[] pinned = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                int n = (int) (mb * 1024 * 1024 / BLOCK);
                long[] p = new long[n];
                for (int i = 0; i < n; i++) {
                    p[i] = u.allocateMemory(BLOCK);
                    u.setMemory(p[i], BLOCK, (byte) 1);
                }
                for (int i = 0; i < n - 1; i++)
                    u.freeMemory(p[i]);
                pinned[id] = p[n - 1];
            });
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("ready " + threads * mb * 1024 * 1024);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
