/* SPDX-License-Identifier: Apache-2.0 */
/* Replays a corpus through a libFuzzer target without libFuzzer, so every
 * fuzz target runs in `make test` on its seeds (fixtures and past crashes).
 * Each file is fed whole, then every prefix-truncated and bit-flipped
 * variant of its first 4 KiB, which is where parsers break. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long runs;

static void feed(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		abort();
	memcpy(copy, data, size);
	LLVMFuzzerTestOneInput(copy, size);
	runs++;
	free(copy);
}

static void feed_variants(const uint8_t *data, size_t size)
{
	size_t lim = size < 4096 ? size : 4096;
	uint8_t *m = malloc(size ? size : 1);

	if (!m)
		abort();
	feed(data, size);
	for (size_t cut = 0; cut < lim; cut += 1 + cut / 16)
		feed(data, cut);
	for (size_t i = 0; i < lim; i += 7) {
		memcpy(m, data, size);
		m[i] ^= (uint8_t)(1u << (i % 8));
		feed(m, size);
		memcpy(m, data, size);
		m[i] = (i & 1) ? '\n' : '\0';
		feed(m, size);
	}
	free(m);
}

static int run_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		abort();
	n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		free(buf);
		return -1;
	}
	feed_variants(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int files = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "driver: '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path) == 0 ? 1 : -1;
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char sub[4096];
		int r;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		r = run_path(sub);
		if (r < 0) {
			closedir(d);
			return -1;
		}
		files += r;
	}
	closedir(d);
	return files;
}

int main(int argc, char **argv)
{
	int files = 0;

	for (int i = 1; i < argc; i++) {
		int r = run_path(argv[i]);

		if (r < 0)
			return 1;
		files += r;
	}
	if (files == 0) {
		fprintf(stderr, "driver: no corpus files\n");
		return 1;
	}
	printf("%d corpus files, %lu runs, no crash\n", files, runs);
	return 0;
}
