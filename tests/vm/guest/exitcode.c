/* exitcode — guest helper: ends the qemu guest with an exit code.
 *
 * Writes CODE (0..127) to qemu's isa-debug-exit device at I/O port 0xf4;
 * qemu then exits with status (CODE << 1) | 1. Statically linked, it runs
 * from the initramfs before anything else is mounted. Returns 1 if the
 * port cannot be reached (not under qemu, or no iobase=0xf4 device).
 */
#include <stdio.h>
#include <sys/io.h>

#define DEBUG_EXIT_PORT 0xf4

static int parse_code(const char *s)
{
	int v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 127)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v > 127 ? 127 : v;
}

int main(int argc, char **argv)
{
	int code = parse_code(argc > 1 ? argv[1] : "0");

	if (code < 0) {
		fprintf(stderr, "usage: exitcode CODE (0..127)\n");
		return 2;
	}
	if (ioperm(DEBUG_EXIT_PORT, 4, 1) < 0) {
		perror("exitcode: ioperm");
		return 1;
	}
	outb((unsigned char)code, DEBUG_EXIT_PORT);
	/* Still here: no isa-debug-exit device. */
	fprintf(stderr, "exitcode: no isa-debug-exit device at 0xf4\n");
	return 1;
}
