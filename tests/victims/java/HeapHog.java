// SPDX-License-Identifier: Apache-2.0
// Test victim: holds MB x 1 MiB byte[] (every page touched), prints "ready"
// and sleeps until killed. Usage: java HeapHog [MB]
import java.util.ArrayList;
import java.util.List;

public class HeapHog {
    static final List<byte[]> HOLD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int mb = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        for (int i = 0; i < mb; i++) {
            byte[] b = new byte[1 << 20];
            for (int j = 0; j < b.length; j += 4096)
                b[j] = (byte) j;
            HOLD.add(b);
        }
        System.out.println("ready " + mb);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
