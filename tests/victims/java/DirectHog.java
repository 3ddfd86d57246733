// SPDX-License-Identifier: Apache-2.0
// Test victim: JVM native growth through direct buffers. Holds MB direct
// ByteBuffers of 1 MiB each (malloc'd by the JVM, NMT category "Other"),
// every page touched, DELAY_MS after each; the Java heap stays small.
// Prints "direct <MiB held>" every 16 MiB. Usage: java DirectHog [MB] [DELAY_MS]
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

public class DirectHog {
    static final List<ByteBuffer> HOLD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int mb = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        long delay = args.length > 1 ? Long.parseLong(args[1]) : 0;
        for (int i = 0; i < mb; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            for (int j = 0; j < b.capacity(); j += 4096)
                b.put(j, (byte) 1);
            HOLD.add(b);
            if (i % 16 == 15) {
                System.out.println("direct " + (i + 1));
                System.out.flush();
            }
            if (delay > 0)
                Thread.sleep(delay);
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
