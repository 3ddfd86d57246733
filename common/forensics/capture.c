/* SPDX-License-Identifier: Apache-2.0 */
/* The capture section (capture.h). */
#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "base/jget.h"
#include "base/util.h"
#include "forensics/capture.h"

void capture_init(struct capture_notes *c)
{
	memset(c, 0, sizeof(*c));
}

int capture_parse_pod_security(const char *s, const char **ret)
{
	static const char *const levels[] = {"privileged", "baseline",
					     "restricted"};

	if (!s || !*s)
		return -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
		if (streq(s, levels[i])) {
			*ret = levels[i];
			return 0;
		}
	return -EINVAL;
}

static bool cap_name_ok(const char *s)
{
	if (!s || !*s ||
	    strlen(s) >= sizeof(((struct capture_notes *)0)->caps[0]))
		return false;
	for (; *s; s++)
		if (!isupper((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static void add_cap(struct capture_notes *c, const char *name)
{
	if (c->n_caps < CAPTURE_MAX_CAPS && cap_name_ok(name))
		strlcpy_safe(c->caps[c->n_caps++], name, sizeof(c->caps[0]));
}

void capture_set_caps(struct capture_notes *c, uint64_t mask)
{
	c->n_caps = 0;
	for (unsigned i = 0; i < 64; i++) {
		char *n, up[32];
		size_t k = 0;

		if (!(mask & (UINT64_C(1) << i)))
			continue;
		n = cap_to_name((cap_value_t)i); /* "cap_sys_ptrace", or "40" */
		if (!n)
			continue;
		for (const char *p = startswith(n, "cap_") ? n + 4 : n;
		     *p && k + 1 < sizeof(up); p++)
			up[k++] = (char)toupper((unsigned char)*p);
		up[k] = '\0';
		cap_free(n);
		add_cap(c, up);
	}
}

bool capture_note(struct capture_notes *c, const char *what, int pid,
		  const char *why)
{
	struct capture_miss *m;

	if (!what || !*what)
		return false;
	for (size_t i = 0; i < c->n; i++)
		if (c->miss[i].pid == pid &&
		    !strncmp(c->miss[i].what, what, CAPTURE_WHAT_MAX - 1))
			return false;
	if (c->n == CAPTURE_MAX_MISSES) {
		c->more++;
		return true;
	}
	m = &c->miss[c->n++];
	strlcpy_safe(m->what, what, sizeof(m->what));
	strlcpy_safe(m->why, why ? why : "", sizeof(m->why));
	m->pid = pid > 0 ? pid : 0;
	return true;
}

struct json_object *capture_to_json(const struct capture_notes *c)
{
	struct json_object *o = json_object_new_object();
	struct json_object *caps = json_object_new_array();
	struct json_object *miss = json_object_new_array();

	if (!o || !caps || !miss) {
		json_object_put(o);
		json_object_put(caps);
		json_object_put(miss);
		return NULL;
	}
	json_object_object_add(o, "pod_security",
			       c->pod_security[0]
				       ? json_object_new_string(c->pod_security)
				       : NULL);
	if (c->have_ids) {
		json_object_object_add(o, "uid", json_object_new_int64(c->uid));
		json_object_object_add(o, "gid", json_object_new_int64(c->gid));
	}
	for (size_t i = 0; i < c->n_caps; i++)
		json_object_array_add(caps, json_object_new_string(c->caps[i]));
	json_object_object_add(o, "capabilities", caps);
	for (size_t i = 0; i < c->n; i++) {
		struct json_object *e = json_object_new_object();

		if (!e)
			continue;
		json_object_object_add(e, "what",
				       json_object_new_string(c->miss[i].what));
		if (c->miss[i].pid > 0)
			json_object_object_add(
				e, "pid", json_object_new_int(c->miss[i].pid));
		json_object_object_add(e, "why",
				       json_object_new_string(c->miss[i].why));
		json_object_array_add(miss, e);
	}
	json_object_object_add(o, "not_captured", miss);
	json_object_object_add(o, "not_captured_more",
			       json_object_new_uint64(c->more));
	return o;
}

static void from_ids(struct json_object *o, struct jget_notes *notes,
		     struct capture_notes *ret)
{
	uint64_t uid, gid;
	bool u = jget_u64(notes, o, "uid", &uid);
	bool g = jget_u64(notes, o, "gid", &gid);

	if (u && g && uid <= UINT32_MAX && gid <= UINT32_MAX) {
		ret->have_ids = true;
		ret->uid = (uint32_t)uid;
		ret->gid = (uint32_t)gid;
	}
}

int capture_from_json(struct json_object *o, struct jget_notes *notes,
		      struct capture_notes *ret)
{
	struct json_object *a;
	const char *lvl;
	uint64_t more = 0;

	capture_init(ret);
	if (!json_object_is_type(o, json_type_object))
		return -ENOENT;
	if (capture_parse_pod_security(jget_str(notes, o, "pod_security"),
				       &lvl) == 0)
		strlcpy_safe(ret->pod_security, lvl, sizeof(ret->pod_security));
	from_ids(o, notes, ret);
	a = jget_array(notes, o, "capabilities");
	for (size_t i = 0; i < jget_len(a); i++)
		add_cap(ret, jget_idx_str(notes, a, i));
	a = jget_array(notes, o, "not_captured");
	for (size_t i = 0; i < jget_len(a); i++) {
		struct json_object *e = jget_idx(a, i);
		int pid = 0;

		(void)jget_int(notes, e, "pid", &pid);
		/* a repeat in someone else's list is dropped, not counted */
		(void)capture_note(ret, jget_str(notes, e, "what"), pid,
				   jget_str(notes, e, "why"));
	}
	if (jget_u64(notes, o, "not_captured_more", &more))
		ret->more = more > UINT64_MAX - ret->more ? UINT64_MAX
							  : ret->more + more;
	return 0;
}
