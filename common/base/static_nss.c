/* SPDX-License-Identifier: Apache-2.0 */
#include <nss.h>
#include <sys/auxv.h>

#include "base/static_nss.h"

bool static_nss_pin(void)
{
	if (getauxval(AT_BASE) != 0)
		return false;
	__nss_configure_lookup("hosts", "files dns");
	return true;
}
