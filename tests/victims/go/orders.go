// SPDX-License-Identifier: Apache-2.0
// A Go service that keeps every order it is sent: a map of 256 KiB orders
// growing at --rate orders a second, never freed, run without GOMEMLIMIT
// (the Go runtime does not know the container's limit). Prints one JSON
// line a second: {"orders": N, "heap_alloc": bytes, "heap_sys": bytes}.
package main

import (
	"encoding/json"
	"flag"
	"os"
	"runtime"
	"time"
)

type order struct {
	id    int
	lines []byte
}

func main() {
	rate := flag.Int("rate", 80, "orders a second")
	size := flag.Int("order-kb", 256, "KiB per order")
	idle := flag.Duration("idle", 0, "wait before taking orders")
	flag.Parse()
	time.Sleep(*idle)
	orders := map[int]*order{}
	enc := json.NewEncoder(os.Stdout)
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	last := time.Now()
	for n := 0; ; n++ {
		<-tick.C
		o := &order{id: n, lines: make([]byte, *size<<10)}
		for i := range o.lines { // touch every page
			o.lines[i] = byte(n + i)
		}
		orders[n] = o
		if time.Since(last) >= time.Second {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			enc.Encode(map[string]uint64{"orders": uint64(len(orders)),
				"heap_alloc": ms.HeapAlloc, "heap_sys": ms.HeapSys})
			last = time.Now()
		}
	}
}
