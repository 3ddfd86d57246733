// SPDX-License-Identifier: Apache-2.0
// Test victim: a Node.js service that keeps every session in a Map and never
// evicts one, run with a V8 heap limit far above its container's
// (`node --max-old-space-size=4096 sessions.js` in a 200 MiB cgroup): the
// old generation grows until the kernel, not V8, stops it. Each session is
// an object holding a unique string of ~4 KiB and a small array, so the
// growth is V8 heap (JS objects and strings), not Buffers outside it.
// Idles IDLE_MS first, then adds RATE MiB/s of sessions, printing
// "held N" every 16 MiB; with STOP_MIB > 0 it stops growing there and
// sleeps (to capture it mid-growth).
// Usage: node [--max-old-space-size=MiB] sessions.js [RATE [IDLE_MS [STOP_MIB]]]
'use strict';

const rate = Number(process.argv[2] || 16);
const idle = Number(process.argv[3] || 2000);
const stop = Number(process.argv[4] || 0);
const sessions = new Map();
// sessions per MiB of RSS: ~4 KiB of string each, plus the object, its
// array and the Map's entry (measured: 144 give ~1 MiB of RSS)
const PER_MIB = 144;

function session(id) {
	// A fresh string per session (V8 would share a repeated literal).
	const token = id.toString(36).padStart(12, '0');
	const payload = token.repeat(341);

	// repeat() builds a tree of cons strings; reading a character
	// flattens it into one sequential string of 4 KiB.
	payload.charCodeAt(0);
	return {
		id,
		user: 'user-' + id,
		created: Date.now(),
		payload,
		history: [id, id + 1, id + 2, id + 3],
	};
}

console.log('start ' + process.pid);
let next = 0;
let mib = 0;
const t0 = Date.now() + idle;

function grow() {
	for (let i = 0; i < PER_MIB; i++, next++)
		sessions.set('s' + next, session(next));
	mib++;
	if (mib % 16 === 0)
		console.log('held ' + mib);
	if (stop > 0 && mib >= stop) {
		console.log('stopped ' + mib);
		setInterval(() => {}, 1 << 30);
		return;
	}
	// paced: the i-th MiB is due at i / rate seconds
	setTimeout(grow, Math.max(0, t0 + (mib * 1000) / rate - Date.now()));
}

setTimeout(grow, idle);
