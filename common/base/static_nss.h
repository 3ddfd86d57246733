/* SPDX-License-Identifier: Apache-2.0 */
/* static_nss: host name lookups of a static program (docs/build.md). A
 * module of its own: glibc's NSS code joins only the programs that call
 * it (the agent, the sidecar's uploader), not the sidecar. */
#pragma once

#include <stdbool.h>

/* In a static program (no dynamic loader: AT_BASE is 0), host names are
 * looked up through files and dns only, which glibc has built in: a
 * static glibc would dlopen() any other module nsswitch.conf names
 * (systemd, mdns, myhostname) from the host, built for the host's glibc.
 * A dynamic one keeps the host's configuration. Returns true when it
 * pinned them. Call before any lookup. */
bool static_nss_pin(void);
