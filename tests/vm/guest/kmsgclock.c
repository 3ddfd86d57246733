/* kmsgclock — guest helper: how far /dev/kmsg timestamps are from
 * CLOCK_MONOTONIC.
 *
 * kmsg stamps records with the kernel's local_clock(); under qemu TCG it
 * differs from CLOCK_MONOTONIC by a per-boot constant of tens of ms, of
 * either sign. Writes five probe records to /dev/kmsg, reads each back and
 * prints "kmsg_minus_monotonic_us=N error_us=E": the offset measured over
 * the shortest write, and half that write's duration. Exits 1 on error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Reads records until ours comes; returns its timestamp or -1. */
static long long read_probe(int fd, int n)
{
	char want[32], rec[8192];
	int tries = 0;

	snprintf(want, sizeof(want), "kmsgclock probe %d\n", n);
	while (tries++ < 100000) {
		ssize_t len = read(fd, rec, sizeof(rec) - 1);
		long long usec = 0;
		const char *p;
		int field = 0;

		if (len < 0 && (errno == EAGAIN || errno == EPIPE))
			continue;
		if (len <= 0)
			return -1;
		rec[len] = '\0';
		p = strchr(rec, ';');
		if (!p || strcmp(p + 1, want) != 0)
			continue;
		/* "prio,seq,usec,flags;": the third field. */
		for (p = rec; *p != ';'; p++) {
			if (*p == ',')
				field++;
			else if (field == 2 && *p >= '0' && *p <= '9')
				usec = usec * 10 + (*p - '0');
		}
		return usec;
	}
	return -1;
}

int main(void)
{
	long long best_off = 0, best_err = -1;
	int fd = open("/dev/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 || lseek(fd, 0, SEEK_END) < 0) {
		perror("kmsgclock: /dev/kmsg");
		return 1;
	}
	for (int i = 0; i < 5; i++) {
		char msg[32];
		int n = snprintf(msg, sizeof(msg), "kmsgclock probe %d\n", i);
		long long t0 = mono_us(), t1, usec;

		if (write(fd, msg, (size_t)n) != n)
			return 1;
		t1 = mono_us();
		usec = read_probe(fd, i);
		if (usec < 0)
			return 1;
		if (best_err < 0 || (t1 - t0) / 2 < best_err) {
			best_err = (t1 - t0) / 2;
			best_off = usec - (t0 + t1) / 2;
		}
	}
	printf("kmsg_minus_monotonic_us=%lld error_us=%lld\n", best_off,
	       best_err);
	return 0;
}
