/* SPDX-License-Identifier: Apache-2.0 */
/* Victim: memory that is no process's RSS. Writes files into a tmpfs
 * directory (charged to the writer's memory cgroup as shmem).
 * Prints {"victim":"tmpfs_writer","pid":…,"written_bytes":…,"files":N}.
 *
 * usage: tmpfs_writer DIR [--file-mb M] [--total-mb T] [--interval-ms MS]
 *   Without --total-mb it writes until killed (or the write fails); with
 *   it, it stops there and sleeps. Files are named oomlens-victim-<n>. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t file = 4 << 20, total = 0, written = 0;
	int interval_ms = 100, n = 0;
	static char buf[1 << 16];

	if (argc < 2) {
		fprintf(stderr, "usage: tmpfs_writer DIR [--file-mb M] "
				"[--total-mb T] [--interval-ms MS]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--file-mb"))
			file = strtoul(argv[i + 1], NULL, 10) << 20;
		else if (!strcmp(argv[i], "--total-mb"))
			total = strtoul(argv[i + 1], NULL, 10) << 20;
		else if (!strcmp(argv[i], "--interval-ms"))
			interval_ms = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "tmpfs_writer: unknown option %s\n",
				argv[i]);
			return 2;
		}
	}
	memset(buf, 0x74, sizeof(buf));
	while (!total || written < total) {
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/oomlens-victim-%d", argv[1],
			 n++);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0) {
			perror("tmpfs_writer: open");
			return 1;
		}
		for (size_t w = 0; w < file; w += sizeof(buf)) {
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
				perror("tmpfs_writer: write");
				return 1;
			}
		}
		close(fd);
		written += file;
		printf("{\"victim\":\"tmpfs_writer\",\"pid\":%d,"
		       "\"written_bytes\":%zu,\"files\":%d}\n",
		       (int)getpid(), written, n);
		fflush(stdout);
		usleep((useconds_t)interval_ms * 1000);
	}
	for (;;)
		pause();
}
