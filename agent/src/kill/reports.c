/* SPDX-License-Identifier: Apache-2.0 */
/* STATE/reports/ kept within --reports-keep and --reports-max-bytes: the
 * directory read, the publish queue asked which bundles it still needs,
 * reports_prune_plan() decides, the files are deleted and the round
 * logged. Detector thread. */
#include <dirent.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "kill/reports_prune.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/util.h"

struct listing {
	struct reports_file *f;
	size_t n, cap;
};

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->f[i].name);
	free(l->f);
}

static int listing_add(struct listing *l, const char *name,
		       const struct stat *st)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct reports_file *f = reallocarray(l->f, cap, sizeof(*f));

		if (!f)
			return -ENOMEM;
		l->f = f;
		l->cap = cap;
	}
	l->f[l->n].name = strdup(name);
	if (!l->f[l->n].name)
		return -ENOMEM;
	l->f[l->n].mtime_ns =
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	l->f[l->n].bytes = (uint64_t)st->st_size;
	l->f[l->n].in_use = false;
	l->n++;
	return 0;
}

/* The regular files of the kills in reports/; symlinks and anything else
 * are not ours and not looked through (fstatat without following). */
static int list_reports(int reports_fd, struct listing *l)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int r = opendir_at(reports_fd, ".", &d);

	if (r < 0)
		return r;
	while (r >= 0 && (de = readdir(d)))
		if (reports_kill_id_len(de->d_name) &&
		    fstatat(reports_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
			    0 &&
		    S_ISREG(st.st_mode))
			r = listing_add(l, de->d_name, &st);
	closedir(d);
	return r;
}

/* bundle_file is state-dir relative: "reports/<name>". */
static void mark_in_use(const char *bundle_file, void *ud)
{
	struct listing *l = ud;
	const char *name;

	if (strncmp(bundle_file, "reports/", 8) != 0)
		return;
	name = bundle_file + 8;
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->f[i].name, name))
			l->f[i].in_use = true;
}

/* What the mode still needs (cluster mode: what the publish queue holds,
 * staged or taken, and the kills waiting for their pod's snapshot). */
static int mark_queue(const struct agent *a, struct listing *l)
{
	return a->hooks ? a->hooks->in_use(a->hooks->ud, mark_in_use, l) : 0;
}

static void remove_files(const struct agent *a, const struct listing *l,
			 const bool *del)
{
	for (size_t i = 0; i < l->n; i++)
		if (del[i] && unlinkat(a->reports_fd, l->f[i].name, 0) < 0 &&
		    errno != ENOENT)
			log_warn(
				"cannot remove \"%s/reports/%s\": %s, ignoring",
				a->opts.state_dir, l->f[i].name,
				strerror(errno));
}

static void log_round(const struct agent *a, const struct reports_pruned *p)
{
	char spared[96] = "";

	if (p->spared)
		snprintf(spared, sizeof(spared),
			 "; %u kept past a limit, the publish queue needs "
			 "them",
			 p->spared);
	if (!p->by_count && !p->by_bytes) {
		if (p->spared)
			log_warn("reports: over --reports-keep %u or "
				 "--reports-max-bytes %llu, nothing removed%s",
				 a->opts.reports_keep,
				 (unsigned long long)a->opts.reports_max_bytes,
				 spared);
		return;
	}
	log_info("reports: removed the files of %u kill(s), %llu bytes: %u "
		 "over --reports-keep %u, %u over --reports-max-bytes %llu%s",
		 p->by_count + p->by_bytes, (unsigned long long)p->bytes,
		 p->by_count, a->opts.reports_keep, p->by_bytes,
		 (unsigned long long)a->opts.reports_max_bytes, spared);
}

void agent_reports_prune(struct agent *a)
{
	struct listing l = {0};
	struct reports_limits lim = {.keep = a->opts.reports_keep,
				     .max_bytes = a->opts.reports_max_bytes};
	struct reports_pruned p;
	_cleanup_free_ bool *del = NULL;
	int r;

	r = list_reports(a->reports_fd, &l);
	if (r >= 0)
		r = mark_queue(a, &l);
	if (r < 0) {
		/* without the queue's answer nothing is known to be free */
		log_warn("reports: cannot read \"%s\" (%s): not pruned",
			 a->opts.state_dir, strerror(-r));
		goto out;
	}
	del = calloc(l.n ? l.n : 1, sizeof(*del));
	r = del ? reports_prune_plan(l.f, l.n, &lim, del, &p) : -ENOMEM;
	if (r < 0) {
		log_warn("reports: %s, not pruned", strerror(-r));
		goto out;
	}
	remove_files(a, &l, del);
	log_round(a, &p);
out:
	listing_release(&l);
}
