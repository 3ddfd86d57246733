/* SPDX-License-Identifier: Apache-2.0 */
/* The ledger's parts and the verdict slots (diagnosis_frame.h). Pure. */
#include <stdarg.h>
#include <stdio.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis_frame.h"

static const char *const kind_names[_DIAG_KIND_MAX] = {
	[DIAG_JAVA_HEAP] = "java-heap",
	[DIAG_JVM_NATIVE] = "jvm-native",
	[DIAG_GO_HEAP] = "go-heap",
	[DIAG_NODE_HEAP] = "node-heap",
	[DIAG_PYTHON_HEAP] = "python-heap",
	[DIAG_DOTNET_HEAP] = "dotnet-heap",
	[DIAG_GLIBC_RETENTION] = "glibc-retention",
	[DIAG_NATIVE_GROWTH] = "native-growth",
	[DIAG_TMPFS_SHMEM] = "tmpfs-shmem",
	[DIAG_KERNEL_MEMORY] = "kernel-memory",
	[DIAG_SPIKE] = "spike",
	[DIAG_LIMIT_TOO_LOW] = "limit-too-low",
	[DIAG_CHILD_PROCESS] = "child-process",
	[DIAG_UNKNOWN] = "unknown",
};

const char *diag_kind_name(enum diag_kind k)
{
	return k < _DIAG_KIND_MAX ? kind_names[k] : "unknown";
}

/* What each kind rests on when found; the glibc estimate from the arena
 * layout alone is set inferred where it is made (runtimes/glibc.c). */
static const enum diag_basis kind_basis[_DIAG_KIND_MAX] = {
	[DIAG_JAVA_HEAP] = DIAG_BASIS_MEASURED,
	[DIAG_JVM_NATIVE] = DIAG_BASIS_MEASURED,
	[DIAG_GO_HEAP] = DIAG_BASIS_MEASURED,
	[DIAG_NODE_HEAP] = DIAG_BASIS_MEASURED,
	[DIAG_PYTHON_HEAP] = DIAG_BASIS_MEASURED,
	[DIAG_DOTNET_HEAP] = DIAG_BASIS_MEASURED,
	[DIAG_GLIBC_RETENTION] = DIAG_BASIS_MEASURED,
	[DIAG_NATIVE_GROWTH] = DIAG_BASIS_INFERRED,
	[DIAG_TMPFS_SHMEM] = DIAG_BASIS_MEASURED,
	[DIAG_KERNEL_MEMORY] = DIAG_BASIS_MEASURED,
	[DIAG_SPIKE] = DIAG_BASIS_INFERRED,
	[DIAG_LIMIT_TOO_LOW] = DIAG_BASIS_INFERRED,
	[DIAG_CHILD_PROCESS] = DIAG_BASIS_INFERRED,
	[DIAG_UNKNOWN] = DIAG_BASIS_INFERRED,
};

const char *diag_basis_name(enum diag_basis b)
{
	return b == DIAG_BASIS_MEASURED ? "measured" : "inferred";
}

const char *diag_human(char *buf, size_t n, uint64_t bytes)
{
	if (bytes >= 10ull << 30)
		snprintf(buf, n, "%.0f GiB", (double)bytes / (1 << 30));
	else if (bytes >= 1ull << 30)
		snprintf(buf, n, "%.1f GiB", (double)bytes / (1 << 30));
	else if (bytes >= MiB)
		snprintf(buf, n, "%.0f MiB", (double)bytes / MiB);
	else
		snprintf(buf, n, "%.0f KiB", (double)bytes / KiB);
	return buf;
}

void diag_part(struct diagnosis *d, int pid, const char *name, uint64_t bytes,
	       bool estimate, const char *fmt, ...)
{
	struct diag_part *p;
	va_list ap;

	if (d->n_parts == DIAG_MAX_PARTS || bytes == 0)
		return;
	p = &d->parts[d->n_parts++];
	strlcpy_safe(p->name, name, sizeof(p->name));
	va_start(ap, fmt);
	vsnprintf(p->source, sizeof(p->source), fmt, ap);
	va_end(ap);
	p->bytes = bytes;
	p->estimate = estimate;
	p->pid = pid;
	/* every line says when its data was taken */
	p->age_s = d->cur_age_s;
	if (d->cur_age_s >= 0.05 && strlen(p->source) + 32 < sizeof(p->source))
		snprintf(p->source + strlen(p->source),
			 sizeof(p->source) - strlen(p->source),
			 " (%.1f s before the kill)", d->cur_age_s);
}

uint64_t diag_take_anon(struct diag_ledger *l, uint64_t want)
{
	uint64_t got = want < l->anon_left ? want : l->anon_left;

	l->anon_left -= got;
	return got;
}

uint64_t diag_part_bytes(const struct diagnosis *d, const char *name)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n_parts; i++)
		if (streq(d->parts[i].name, name))
			sum = add_sat(sum, d->parts[i].bytes);
	return sum;
}

struct diag_verdict *diag_verdict(struct diagnosis *d, enum diag_kind k,
				  int confidence, uint64_t bytes)
{
	struct diag_verdict *v = NULL;

	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == k)
			v = d->verdicts[i].confidence < confidence
				    ? &d->verdicts[i]
				    : &d->spare;
	if (!v)
		v = d->n_verdicts < ARRAY_SIZE(d->verdicts)
			    ? &d->verdicts[d->n_verdicts++]
			    : &d->spare;

	memset(v, 0, sizeof(*v));
	v->kind = k;
	v->basis = kind_basis[k];
	v->confidence = confidence > 99 ? 99 : confidence;
	v->bytes = bytes;
	return v;
}

struct diag_verdict *diag_verdict_find(struct diagnosis *d, enum diag_kind k)
{
	struct diag_verdict *v = NULL;

	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == k)
			v = &d->verdicts[i];
	return v;
}

void diag_line(char (*lines)[DIAG_LINE], size_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n == DIAG_MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[(*n)++], DIAG_LINE, fmt, ap);
	va_end(ap);
}

uint64_t diag_suggested_limit(const struct diag_input *in,
			      const struct diagnosis *d)
{
	uint64_t peak = d->usage_bytes;

	for (size_t i = 0; i < in->n_tl; i++)
		if (in->tl[i].usage > peak && in->tl[i].t <= 0)
			peak = in->tl[i].usage;
	/* a sample above the limit is a reading error, not a need */
	if (d->limit_bytes != UINT64_MAX)
		peak = min_u64(peak, add_sat(d->limit_bytes,
					     diag_slack(d->limit_bytes)));
	return round_up(add_sat(peak, peak / 4), 64 * MiB);
}

struct json_object *diag_bundle_json(const struct bundle *b, const char *dir,
				     const char *name, struct diag_input *in,
				     char *path, size_t size)
{
	snprintf(path, size, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
	jget_where(&in->notes, path);
	return bundle_get_json(b, path);
}
