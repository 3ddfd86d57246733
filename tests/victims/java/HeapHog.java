// SPDX-License-Identifier: Apache-2.0
// Test victim: holds MB x 1 MiB byte[] (every page touched), prints "ready"
// and sleeps until killed. With DELAY_MS it sleeps that long after each MiB,
// a heap that grows slowly towards an OOM kill.
// Usage: java HeapHog [MB] [DELAY_MS]
import java.util.ArrayList;
import java.util.List;

public class HeapHog {
    static final List<byte[]> HOLD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int mb = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        long delay = args.length > 1 ? Long.parseLong(args[1]) : 0;
        for (int i = 0; i < mb; i++) {
            byte[] b = new byte[1 << 20];
            for (int j = 0; j < b.length; j += 4096)
                b[j] = (byte) j;
            HOLD.add(b);
            if (delay > 0)
                Thread.sleep(delay);
        }
        System.out.println("ready " + mb);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
