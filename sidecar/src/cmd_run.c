/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "commands.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "oomlens-sidecar run: not yet\n");
	return 1;
}
