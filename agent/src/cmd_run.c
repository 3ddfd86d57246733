/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent run: placeholder until the detector lands. */
#include <stdio.h>

#include "commands.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "oomlens-agent run: the detector is being built\n");
	return 1;
}
